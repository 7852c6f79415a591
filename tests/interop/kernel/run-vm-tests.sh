#!/bin/bash
# run-vm-tests.sh: test a 9P server with the Linux kernel's 9p client.
#
# Boots Debian's kernel under QEMU (KVM when it really works, else TCG) with
# no guest network; the guest reaches the server through a virtio-serial port
# whose QEMU chardev is connected to the server's unix socket. In the guest,
# ninep-relay mounts 9p over the port (trans=fd), and the POSIX suite and
# np-fsx run under a covering set of mount configurations. Several
# configurations share one boot (one 9P connection): each is a fresh mount,
# i.e. a new Tversion on the same connection. Results are printed as PASS/FAIL/SKIP kernel/<config>/<case>.
#
# usage: run-vm-tests.sh [server options] [--configs LIST] [--bench] ...
#   --server diod            add the diod preset (the default if no server given)
#   --server-cmd 'CMD'       add a server started as CMD, where {sock} is the
#                            unix socket it must listen on and {dir} the export
#   --socket PATH --export DIR
#                            add an already-listening server
#   --name NAME              label of the server added last
#   --aname STR              attach name for the server added last ({dir} expands;
#                            default {dir})
#   --versions L,u,2000      protocol versions the server added last speaks
#                            (default all; diod preset: L)
#   --xfail case,case        known deviations of the server added last: their
#                            FAILs are reported as SKIP "known deviation"
#   --configs a,b,...        run only these configurations (see --list)
#   --list                   list configurations and exit
#   --bench                  benchmark instead of test; with two servers runs
#                            A B A B ... (--rounds N, default 2)
#   --bench-ops N --bench-mib N   benchmark sizes (default 2000 and 32)
#   --timeout SEC            hard limit per VM boot (default 330)
#   --fsx-ops N              np-fsx operations per configuration (default 2000)
#   --posix-args 'ARGS'      extra posix-suite arguments, e.g. '--case statfs'
#   --boot-per msize|config|one
#                            configurations sharing a VM boot (default msize:
#                            diod keeps the first msize of a connection when a
#                            later Tversion asks for more)
#   --keep                   keep the work directory
# Environment: NINEP_VM_CACHE (default /var/cache/ninep-vm) holds the kernel
# package and what is extracted from it; NINEP_VM_ACCEL=tcg|kvm forces the
# accelerator; CC builds the static guest programs (default gcc).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../../.." && pwd)
cache=${NINEP_VM_CACHE:-/var/cache/ninep-vm}
CC=${CC:-gcc}

die() { echo "run-vm-tests: $*" >&2; exit 2; }
note() { echo "run-vm-tests: $*" >&2; }
stamp() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(stamp)" 'BEGIN { printf "%.1f", b - a }'; }

# ---- configurations ---------------------------------------------------------
# NAME VERSION OPTIONS POSIX-MODE. Together they cover each cache mode and
# each msize at least once, cache=none at every msize (the path with the most
# 9P traffic), and the full mode (2,000-entry listing) once; the last two are for
# servers that speak the older protocol versions.
all_configs=(
	"L-none-8k      L    cache=none,msize=8192     quick"
	"L-none-128k    L    cache=none,msize=131072   quick"
	"L-none-512k    L    cache=none,msize=524288   quick"
	"L-loose-8k     L    cache=loose,msize=8192    quick"
	"L-loose-128k   L    cache=loose,msize=131072  full"
	"L-mmap-512k    L    cache=mmap,msize=524288   quick"
	"u-none-128k    u    cache=none,msize=131072   quick"
	"2000-none-128k 2000 cache=none,msize=131072,uname=root quick"
)
# Cases that cannot pass by protocol design, per version: 9P2000.u has
# second-granular times and no statfs/xattr/lock messages (v9fs's .u lock
# handler records no lock at all, so fcntl_locks cannot pass); plain 9P2000
# in addition has no links, numeric owners or unlink-while-open semantics,
# mounts as one user (uname=root: no per-uid attach without n_uname), and
# its directories hold no "." and ".." (Plan 9 semantics, which readdir_many
# would count; tests/integration/test_compat.c checks 9P2000 listings).
posix_cases_u="create_rw append truncate o_append_two_fds o_excl sparse unlink_open rename_over_file rename_dir hardlinks symlinks mkdir_rmdir_nested rmdir_nonempty readdir_many chown_chmod eacces_other_user mmap_shared"
posix_cases_2000="create_rw append truncate o_append_two_fds sparse rename_over_file rename_dir mkdir_rmdir_nested rmdir_nonempty mmap_shared"

# ---- arguments --------------------------------------------------------------
vname() { case $1 in L) echo 9P2000.L ;; u) echo 9P2000.u ;; *) echo 9P2000 ;; esac; }
srv_names=() srv_cmds=() srv_socks=() srv_exports=() srv_anames=() srv_versions=() srv_xfail=()
add_server() { # NAME CMD SOCK EXPORT VERSIONS [XFAIL]
	srv_names+=("$1") srv_cmds+=("$2") srv_socks+=("$3") srv_exports+=("$4")
	srv_anames+=("{dir}") srv_versions+=("$5") srv_xfail+=("${6:-}")
}
diod_cmd='diod -f -n -c /dev/null -e {dir} -l {sock} -L stderr'
# Where diod (1.0.24) differs from a local file system; see the report lines.
# utimensat: the nanoseconds of an explicit atime are dropped (mtime keeps them).
# unlink_open: fids name paths, so fstat on an unlinked open file fails.
diod_xfail=utimensat,unlink_open
configs= posix_args= boot_per=msize bench=0 rounds=2 bench_ops=2000 bench_mib=32 timeout_s=330 fsx_ops=2000 keep=0 list=0
pending_sock=
while [ $# -gt 0 ]; do
	case "$1" in
	--server)
		[ "${2:-}" = diod ] || die "unknown server preset '${2:-}' (use --server-cmd)"
		add_server diod "$diod_cmd" "" "" L "$diod_xfail"; shift ;;
	--server-cmd) add_server "server$((${#srv_names[@]} + 1))" "$2" "" "" "L,u,2000"; shift ;;
	--socket) pending_sock=$2; shift ;;
	--export)
		[ -n "$pending_sock" ] || die "--export needs --socket first"
		add_server "server$((${#srv_names[@]} + 1))" "" "$pending_sock" "$2" "L,u,2000"
		pending_sock=; shift ;;
	--name|--aname|--versions|--xfail)
		[ ${#srv_names[@]} -gt 0 ] || die "$1 applies to a server given before it"
		last=$((${#srv_names[@]} - 1))
		case "$1" in
		--name) srv_names[$last]=$2 ;;
		--aname) srv_anames[$last]=$2 ;;
		--versions) srv_versions[$last]=$2 ;;
		--xfail) srv_xfail[$last]=$2 ;;
		esac
		shift ;;
	--configs) configs=$2; shift ;;
	--list) list=1 ;;
	--bench) bench=1 ;;
	--rounds) rounds=$2; shift ;;
	--bench-ops) bench_ops=$2; shift ;;
	--bench-mib) bench_mib=$2; shift ;;
	--timeout) timeout_s=$2; shift ;;
	--fsx-ops) fsx_ops=$2; shift ;;
	--posix-args) posix_args=$2; shift ;;
	--boot-per) boot_per=$2; shift ;;
	--keep) keep=1 ;;
	-h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown argument '$1' (see --help)" ;;
	esac
	shift
done
[ -z "$pending_sock" ] || die "--socket needs --export"
if [ $list = 1 ]; then
	printf '%s\n' "${all_configs[@]}"
	exit 0
fi
[ ${#srv_names[@]} -gt 0 ] || add_server diod "$diod_cmd" "" "" L "$diod_xfail"

# ---- prerequisites ----------------------------------------------------------
qemu=$(command -v qemu-system-x86_64) || die "qemu-system-x86_64 is missing (apt-get install qemu-system-x86)"
busybox=
for b in /bin/busybox /usr/bin/busybox; do
	if [ -x "$b" ] && file -L "$b" 2>/dev/null | grep -q 'statically linked'; then busybox=$b; fi
done
[ -n "$busybox" ] || die "a static busybox is missing (apt-get install busybox-static)"
for tool in "$CC" xz dpkg apt-get strings timeout; do
	command -v "$tool" >/dev/null || die "$tool is missing"
done
bios=/usr/share/qemu/qboot.rom
[ -r "$bios" ] || bios=

# ---- kernel: Debian's package, fetched into the cache, never installed ------
mkdir -p "$cache"
deb=$(ls "$cache"/linux-image-6.*-amd64_*.deb 2>/dev/null | grep -v unsigned | sort -V | tail -n 1 || true)
if [ -z "$deb" ]; then
	pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
	[ -n "$pkg" ] || die "cannot resolve linux-image-amd64 (apt-get update?)"
	note "downloading $pkg into $cache"
	(cd "$cache" && apt-get download "$pkg" >/dev/null 2>&1) || die "apt-get download $pkg failed"
	deb=$(ls "$cache"/"$pkg"_*.deb | tail -n 1)
fi
kver=$(basename "$deb" | sed -E 's/^linux-image-([^_]+)_.*/\1/')
kdir=$cache/$kver
if [ ! -e "$kdir/vmlinux" ]; then
	rm -rf "$kdir.tmp"
	mkdir -p "$kdir.tmp"
	dpkg -x "$deb" "$kdir.tmp/root"
	"$here/extract-vmlinux.sh" "$kdir.tmp/root/boot/vmlinuz-$kver" "$kdir.tmp/vmlinux"
	rm -rf "$kdir"
	mv "$kdir.tmp" "$kdir"
fi
moddir=$kdir/root/lib/modules/$kver

# Modules in dependency order, from each module's own depends= field.
declare -A mod_path=() mod_done=()
while IFS= read -r f; do
	m=${f##*/}
	m=${m%%.ko*}
	mod_path[$m]=$f
done < <(find "$moddir/kernel" -name '*.ko*')
mod_order=()
add_module() {
	local m=$1 d deps
	[ -n "${mod_done[$m]:-}" ] && return 0
	[ -n "${mod_path[$m]:-}" ] || die "module $m not found in $moddir"
	mod_done[$m]=1
	deps=$(modinfo_depends "${mod_path[$m]}")
	for d in ${deps//,/ }; do add_module "$d"; done
	mod_order+=("$m")
}
modinfo_depends() {
	case "$1" in
	*.xz) xz -dc "$1" ;;
	*.zst) zstd -dc "$1" ;;
	*) cat "$1" ;;
	esac | strings -a | sed -n 's/^depends=//p' | head -n 1
}
for m in 9pnet_fd 9p virtio_pci virtio_console; do add_module "$m"; done

# ---- accelerator: KVM only if the CPU has it and a probe really starts -----
probe_kvm() {
	[ -w /dev/kvm ] || return 1
	grep -qwE 'vmx|svm' /proc/cpuinfo || return 1
	# Halted by -S, a working VM just sits there; a broken KVM aborts at once.
	"$qemu" -accel kvm -cpu host -machine q35 -nodefaults -display none -no-user-config \
		-monitor none -S </dev/null >/dev/null 2>&1 &
	local p=$!
	sleep 1
	if kill -0 "$p" 2>/dev/null; then
		kill "$p"
		wait "$p" 2>/dev/null || true
		return 0
	fi
	wait "$p" 2>/dev/null || true
	return 1
}
accel=${NINEP_VM_ACCEL:-}
if [ -z "$accel" ]; then
	if probe_kvm; then accel=kvm; else accel=tcg; fi
fi
if [ "$accel" = kvm ]; then cpu=(-accel kvm -cpu host); else cpu=(-accel tcg -cpu max); fi

# ---- work directory, guest programs and initramfs ---------------------------
work=$(mktemp -d /tmp/ninep-vm.XXXXXX)
# The server attaches unprivileged users (access=user); they must reach the export.
chmod 755 "$work"
server_pid=
cleanup() {
	if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
	if [ $keep = 1 ]; then note "work directory kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

t_start=$(stamp)
cflags=(-static -std=gnu11 -O2 -D_GNU_SOURCE -Wall -Wextra)
mkdir -p "$work/bin"
$CC "${cflags[@]}" -o "$work/bin/posix-suite" "$src"/tests/posix/posix_suite.c "$src"/tests/posix/ps_util.c \
	"$src"/tests/posix/cases_*.c || die "building posix-suite failed"
$CC "${cflags[@]}" -o "$work/bin/np-fsx" "$src/tests/posix/np_fsx.c" || die "building np-fsx failed"
$CC "${cflags[@]}" -o "$work/bin/ninep-relay" "$here/ninep_relay.c" || die "building ninep-relay failed"
$CC "${cflags[@]}" -o "$work/bin/np-vmbench" "$here/np_vmbench.c" || die "building np-vmbench failed"

# The reference run: what a local file system does is what the mount must do.
mkdir -p "$work/ref"
"$work/bin/posix-suite" "$work/ref" --quick > "$work/reference.txt" || true
grep -q '^FAIL' "$work/reference.txt" && note "local reference run has failures:" && grep '^FAIL' "$work/reference.txt" >&2

base=$work/initramfs-base
mkdir -p "$base"/{bin,lib/modules,proc,sys,dev,tmp,mnt,etc}
cp "$busybox" "$base/bin/busybox"
cp "$work"/bin/* "$base/bin/"
for m in "${mod_order[@]}"; do
	case "${mod_path[$m]}" in
	*.xz) xz -dc "${mod_path[$m]}" > "$base/lib/modules/$m.ko" ;;
	*.zst) zstd -dc "${mod_path[$m]}" > "$base/lib/modules/$m.ko" ;;
	*) cp "${mod_path[$m]}" "$base/lib/modules/$m.ko" ;;
	esac
done
printf '%s\n' "${mod_order[@]}" > "$base/modules.list"
cp "$here/guest-init.sh" "$base/init"
cp "$work/reference.txt" "$base/reference.txt"
printf 'root:x:0:0:root:/:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' > "$base/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$base/etc/group"
note "prepared kernel $kver, ${#mod_order[@]} modules, guest programs in $(since "$t_start") s (accel $accel)"

# make_initramfs DIR PLAN PLAN-ENV OUT: the base plus this boot's plan.
make_initramfs() {
	local dir=$1
	rm -rf "$dir"
	cp -a "$base" "$dir"
	printf '%s\n' "$2" > "$dir/plan"
	printf '%s\n' "$3" > "$dir/plan.env"
	(cd "$dir" && find . | LC_ALL=C sort | "$busybox" cpio -o -H newc 2>/dev/null) > "$4"
}

# ---- servers ----------------------------------------------------------------
# start_server I: start (or point at) server I; sets sock and export.
start_server() {
	local i=$1
	server_pid=
	if [ -n "${srv_cmds[$i]}" ]; then
		export_dir=$work/export.$i
		sock=$work/sock.$i
		rm -rf "$export_dir" "$sock"
		mkdir -p "$export_dir"
		chmod 755 "$export_dir"
		local cmd=${srv_cmds[$i]//\{sock\}/$sock}
		cmd=${cmd//\{dir\}/$export_dir}
		sh -c "exec $cmd" > "$work/server.$i.log" 2>&1 &
		server_pid=$!
		for _ in $(seq 100); do
			[ -S "$sock" ] && break
			kill -0 "$server_pid" 2>/dev/null || break
			sleep 0.05
		done
		[ -S "$sock" ] || { cat "$work/server.$i.log" >&2; die "server ${srv_names[$i]} did not create $sock"; }
	else
		sock=${srv_socks[$i]}
		export_dir=${srv_exports[$i]}
		[ -S "$sock" ] || die "no listening socket at $sock"
	fi
	aname=${srv_anames[$i]//\{dir\}/$export_dir}
}
stop_server() {
	if [ -n "$server_pid" ]; then
		kill "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
		server_pid=
	fi
}

# boot PLAN PLAN-ENV LOG: one VM run against the started server; prints the
# guest's NINEP- lines as they arrive and keeps the whole console in LOG.
boot() {
	local initrd=$work/initrd.cpio t0
	make_initramfs "$work/initramfs" "$1" "$2" "$initrd"
	t0=$(stamp)
	set +e
	timeout --kill-after=5 "$timeout_s" "$qemu" "${cpu[@]}" -machine q35 -smp 1 -m 1024 \
		${bios:+-bios "$bios"} -kernel "$kdir/vmlinux" -initrd "$initrd" \
		-append "console=ttyS0 loglevel=3 panic=-1 rdinit=/init" \
		-nodefaults -no-user-config -display none -no-reboot -nic none \
		-serial stdio -monitor none \
		-chardev socket,id=c0,path="$sock" \
		-device virtio-serial-pci -device virtserialport,chardev=c0,name=ninep \
		</dev/null 2>"$3.qemu" | tr -d '\r' | tee "$3" | grep --line-buffered -E '^NINEP-(RESULT|INFO|TIME|BOOTED|DONE|BENCH)' |
		sed -u -E 's/^NINEP-RESULT /  guest: /; s/^NINEP-/  /' >&2
	local status=${PIPESTATUS[0]}
	set -e
	boot_seconds=$(since "$t0")
	if [ "$status" = 124 ] || [ "$status" = 137 ]; then
		echo "FAIL kernel/vm: no result within ${timeout_s}s (VM killed)" >> "$work/extra-results"
	elif [ "$status" != 0 ]; then
		echo "FAIL kernel/vm: qemu exited with $status: $(head -c 300 "$3.qemu")" >> "$work/extra-results"
	elif ! grep -q '^NINEP-DONE' "$3"; then
		echo "FAIL kernel/vm: guest did not finish (see console log)" >> "$work/extra-results"
	fi
	return 0
}

: > "$work/extra-results"
fsx_seed=$(( $(date +%s) % 100000 ))

if [ $bench = 0 ]; then
	# ---- tests ----------------------------------------------------------
	total_pass=0 total_fail=0 total_skip=0
	for i in "${!srv_names[@]}"; do
		plan_lines=() plan_keys=() skipped_lines=()
		for c in "${all_configs[@]}"; do
			read -r name ver opts mode <<<"$c"
			if [ -n "$configs" ] && [[ ",$configs," != *",$name,"* ]]; then continue; fi
			if [[ ",${srv_versions[$i]}," != *",$ver,"* ]]; then
				skipped_lines+=("SKIP kernel/$name: not applicable (${srv_names[$i]} does not speak $(vname "$ver"))")
				continue
			fi
			case $ver in
			L) vopt=9p2000.L extra="--expect /reference.txt" ;;
			u) vopt=9p2000.u extra=$(printf -- '--case %s ' $posix_cases_u) ;;
			2000) vopt=9p2000 extra=$(printf -- '--case %s ' $posix_cases_2000) ;;
			esac
			# cache=none maps files read-only (the kernel refuses writable
			# MAP_SHARED there), so mmap is tested under the caching modes.
			fsxmmap=mmap
			if [[ $opts == *cache=none* ]]; then
				fsxmmap=nommap
				extra+=" --may-skip mmap_shared"
			fi
			plan_lines+=("$name version=$vopt,$opts $mode $fsx_ops $fsxmmap $extra $posix_args")
			case $boot_per in
			msize) key=$(tr ',' '\n' <<<"$opts" | grep '^msize=' || echo default) ;;
			config) key=$name ;;
			*) key=one ;;
			esac
			plan_keys+=("$key")
		done
		results=
		for key in $(printf '%s\n' "${plan_keys[@]}" | awk '!seen[$0]++'); do
			plan=
			for j in "${!plan_lines[@]}"; do
				[ "${plan_keys[$j]}" = "$key" ] && plan+="${plan_lines[$j]}"$'\n'
			done
			note "server ${srv_names[$i]}: boot for $(echo "$plan" | awk 'NF { print $1 }' | tr '\n' ' ')"
			start_server "$i"
			boots=$((${boots:-0} + 1))
			log=$work/console.$i.$boots.log
			boot "$plan" "ANAME='$aname'
FSX_SEED=$fsx_seed" "$log"
			stop_server
			# Results, in the order the guest printed them.
			results+=$(sed -n -E 's/^NINEP-RESULT ((PASS|FAIL|SKIP) kernel\/.*)$/\1/p' "$log"; cat "$work/extra-results")$'\n'
			: > "$work/extra-results"
			timing+="  ${srv_names[$i]}: boot $boots: kernel up after $(sed -n 's/^NINEP-BOOTED //p' "$log") s (guest clock), VM total $boot_seconds s;"
			timing+=" $(sed -n 's/^NINEP-TIME //p' "$log" | awk '{ printf "%s %s s; ", $1, $2 }')"$'\n'
			if grep -q '^FAIL' <<<"$results"; then
				note "console log tail (${srv_names[$i]}, boot $boots):"
				grep -v '^NINEP-\(RESULT PASS\|INFO\|TIME\)' "$log" | tail -n 40 >&2
				tail -n 20 "$work/server.$i.log" >&2 2>/dev/null || true
			fi
		done
		results=$(sed '/^$/d' <<<"$results")
		# Known deviations of this server are reported, but not as failures.
		for x in ${srv_xfail[$i]//,/ }; do
			results=$(sed -E "s#^FAIL (kernel/[^/]+/$x): #SKIP \1: known ${srv_names[$i]} deviation: #" <<<"$results")
		done
		if [ ${#srv_names[@]} -gt 1 ]; then results=$(sed "s#kernel/#kernel/${srv_names[$i]}/#" <<<"$results"); fi
		[ -z "$results" ] || echo "$results"
		[ ${#skipped_lines[@]} -eq 0 ] || printf '%s\n' "${skipped_lines[@]}"
		total_pass=$((total_pass + $(grep -c '^PASS' <<<"$results" || true)))
		total_fail=$((total_fail + $(grep -c '^FAIL' <<<"$results" || true)))
		total_skip=$((total_skip + $(grep -c '^SKIP' <<<"$results" || true) + ${#skipped_lines[@]}))
	done
	printf 'timing:\n%s' "${timing:-}" >&2
	note "total time $(since "$t_start") s"
	echo "$total_pass passed, $total_fail failed, $total_skip skipped"
	[ "$total_fail" = 0 ]
	exit
fi

# ---- benchmark: A B A B ... so drift affects every server alike -------------
bench_plan="bench version=9p2000.L,cache=none,msize=524288 bench 0 nommap -n $bench_ops -s $bench_mib"
: > "$work/bench.txt"
for r in $(seq "$rounds"); do
	for i in "${!srv_names[@]}"; do
		note "bench round $r: ${srv_names[$i]}"
		start_server "$i"
		log=$work/bench.$r.$i.log
		boot "$bench_plan" "ANAME='$aname'
FSX_SEED=$fsx_seed" "$log"
		stop_server
		sed -n -E "s/^NINEP-BENCH bench (.*)$/${srv_names[$i]} $r \1/p" "$log" >> "$work/bench.txt"
		if [ -s "$work/extra-results" ] || grep -q '^NINEP-RESULT FAIL' "$log"; then
			cat "$work/extra-results" >&2
			grep '^NINEP-RESULT FAIL' "$log" >&2 || true
			die "benchmark run failed for ${srv_names[$i]}"
		fi
	done
done
echo "server round measurement value unit"
cat "$work/bench.txt"
echo "# mean over $rounds rounds"
awk '{ k = $1 " " $3; s[k] += $4; n[k]++; u[k] = $5 } END { for (k in s) printf "%s %.1f %s\n", k, s[k] / n[k], u[k] }' \
	"$work/bench.txt" | sort
note "total time $(since "$t_start") s"
