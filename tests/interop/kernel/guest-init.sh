#!/bin/busybox sh
# /init of the test VM. Loads the 9p and virtio modules, then for each line
# of /plan mounts the host's server through ninep-relay, runs the POSIX suite
# and np-fsx (or the benchmark), unmounts, and finally powers off. Every line
# meant for the host starts with NINEP- so it survives interleaved kernel
# messages on the serial console.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp

say() { echo "NINEP-$*"; }
now() { cut -d' ' -f1 /proc/uptime; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

say "BOOTED $(now)"
while read -r m; do
	insmod "/lib/modules/$m.ko" || say "RESULT FAIL kernel/boot/insmod-$m: insmod failed"
done < /modules.list
. /plan.env

# One plan line: NAME MOUNT-OPTIONS POSIX-MODE FSX-OPS FSX-MMAP [posix-suite args...]
# POSIX-MODE is quick, full, bench or none; FSX-OPS 0 skips np-fsx; FSX-MMAP
# is mmap or nommap (cache=none refuses writable shared mappings).
while read -r name opts posix fsxops fsxmmap extra; do
	case "$name" in ''|'#'*) continue ;; esac
	t0=$(now)
	mnt=/mnt/$name
	mkdir -p "$mnt"
	if ! ninep-relay ninep "$mnt" "$opts,aname=$ANAME" 2>/tmp/err; then
		say "RESULT FAIL kernel/$name/mount: $(tr '\n' ' ' < /tmp/err)"
		say "TIME $name $(elapsed "$t0")"
		continue
	fi
	msize=$(grep " $mnt " /proc/mounts | tr ',' '\n' | grep '^msize=' | head -n 1)
	say "INFO $name mounted in $(elapsed "$t0") s (negotiated ${msize:-msize unknown})"
	work=$mnt/$name
	mkdir -p "$work"

	case "$posix" in
	quick|full)
		# quick: 200-entry listing; full: 2,000 entries, deeper trees (the
		# 10,000-entry listing runs through FUSE, where round trips are cheap).
		q=--entries\ 2000; [ "$posix" = quick ] && q=--quick
		posix-suite "$work" $q --times --keep-files $extra > /tmp/posix.out 2>/tmp/posix.err
		rc=$?
		sed -n -E "s#^(PASS|FAIL|SKIP) ([a-z_0-9]+)#NINEP-RESULT \1 kernel/$name/\2#p" /tmp/posix.out
		sed -n "s#^posix-suite: \(.* took .*\)#NINEP-INFO $name: \1#p" /tmp/posix.err
		if [ $rc -ne 0 ] && ! grep -q '^FAIL ' /tmp/posix.out; then
			say "RESULT FAIL kernel/$name/posix-suite: exited with status $rc: $(tail -n 3 /tmp/posix.err | tr '\n' ' ')"
		fi
		;;
	bench)
		np-vmbench "$work" $extra > /tmp/bench.out 2>&1
		rc=$?
		sed -n -e "s#^BENCH #NINEP-BENCH $name #p" /tmp/bench.out
		[ $rc -ne 0 ] && say "RESULT FAIL kernel/$name/bench: $(tail -n 3 /tmp/bench.out | tr '\n' ' ')"
		;;
	esac
	if [ "$fsxops" != 0 ]; then
		fm=
		[ "$fsxmmap" = nommap ] && fm=--no-mmap
		t1=$(now)
		if np-fsx "$work/fsx.file" -N "$fsxops" -S "$FSX_SEED" $fm > /tmp/fsx.out 2> /tmp/fsx.err; then
			say "RESULT PASS kernel/$name/fsx"
			say "INFO $name: np-fsx $fsxops ops $fm took $(elapsed "$t1") s"
		else
			say "RESULT FAIL kernel/$name/fsx: $(head -n 1 /tmp/fsx.err)"
			sed 's/^/NINEP-LOG /' /tmp/fsx.err
		fi
	fi
	t1=$(now)
	if ! umount "$mnt"; then
		say "RESULT FAIL kernel/$name/umount: busy or failed"
		umount -l "$mnt"
	fi
	say "INFO $name unmounted in $(elapsed "$t1") s"
	say "TIME $name $(elapsed "$t0")"
done < /plan
say "DONE $(now)"
sync
poweroff -f
