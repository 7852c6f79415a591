#!/bin/sh
# Identity modes of ninepd end to end (needs root): --multi-user, --squash,
# --allow-users, --read-only.  Two throw-away users are created and removed.
#   ninepd-multiuser.sh NINEPD NINEP
set -u
NINEPD=$1 NINEP=$2
[ "$(id -u)" = 0 ] || { echo "not root: skipping"; exit 77; }
command -v useradd >/dev/null || { echo "no useradd: skipping"; exit 77; }
U1=npt1_$$ U2=npt2_$$
W=$(mktemp -d /tmp/ninepd-mu.XXXXXX)
PID=
cleanup() {
	[ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
	userdel "$U1" 2>/dev/null; userdel "$U2" 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT INT TERM
useradd -M -r -s /usr/sbin/nologin "$U1" || exit 1
useradd -M -r -s /usr/sbin/nologin "$U2" || exit 1
E=$W/export
mkdir -p "$E/shared" && chmod 1777 "$E/shared"
echo "host file" >"$E/hostfile"

FAILS=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; FAILS=$((FAILS + 1)); }
start() { # start OPTIONS...: ninepd on a fresh socket
	stop
	rm -f "$W/sock"
	"$NINEPD" --listen "unix:$W/sock" "$@" 2>"$W/log" &
	PID=$!
	i=0; while [ ! -S "$W/sock" ] && [ $i -lt 200 ]; do sleep 0.02; i=$((i + 1)); done
	[ -S "$W/sock" ] || { echo "ninepd did not start:"; cat "$W/log"; exit 1; }
}
stop() { [ -n "$PID" ] && kill "$PID" && wait "$PID"; PID=; }
as() { u=$1; shift; "$NINEP" -a "unix:$W/sock" -u "$u" "$@"; }
expect_fail() { # expect_fail NAME MESSAGE COMMAND...
	name=$1 msg=$2; shift 2
	if "$@" >"$W/out" 2>"$W/err"; then bad "$name (succeeded)"
	elif grep -Fq -- "$msg" "$W/err"; then ok "$name"
	else bad "$name"; sed 's/^/    /' "$W/err"; fi
}
owner() { stat -c %U "$1"; }

# --multi-user: each user acts as themself.
start --multi-user "$E"
echo one | as "$U1" write /shared/f1 && [ "$(owner "$E/shared/f1")" = "$U1" ] &&
	ok "multi-user: $U1's file is owned by $U1" || bad "multi-user: owner of f1 ($(owner "$E/shared/f1" 2>&1))"
echo two | as "$U2" write /shared/f2 && [ "$(owner "$E/shared/f2")" = "$U2" ] &&
	ok "multi-user: $U2's file is owned by $U2" || bad "multi-user: owner of f2"
as "$U1" mkdir /shared/d1 && [ "$(owner "$E/shared/d1")" = "$U1" ] &&
	ok "multi-user: mkdir owned by $U1" || bad "multi-user: mkdir owner"
as "$U1" chmod 0600 /shared/f1 && [ "$(stat -c %a "$E/shared/f1")" = 600 ] &&
	ok "multi-user: chmod by the owner" || bad "multi-user: chmod"
expect_fail "multi-user: $U2 cannot read $U1's 0600 file" "Permission denied" as "$U2" cat /shared/f1
expect_fail "multi-user: $U2 cannot remove $U1's file in a sticky dir" "not permitted" as "$U2" rm /shared/f1
expect_fail "multi-user: $U1 cannot write the root-owned export root" "Permission denied" \
	sh -c "echo x | '$NINEP' -a 'unix:$W/sock' -u '$U1' write /rootfile"
[ "$(as "$U1" cat /shared/f1)" = one ] && ok "multi-user: the owner reads it" || bad "multi-user: owner read"
[ ! -e "$E/rootfile" ] && ok "multi-user: nothing created by the refused write" || bad "rootfile exists"
expect_fail "multi-user: an unknown user is refused" "Permission denied" as "nosuchuser_$$" ls /

# --squash: everyone is U2.
start --squash "$U2" "$E"
echo three | as "$U1" write /shared/g && [ "$(owner "$E/shared/g")" = "$U2" ] &&
	ok "squash: $U1's file is owned by $U2" || bad "squash: owner of g ($(owner "$E/shared/g" 2>&1))"
echo four | as root write /shared/h && [ "$(owner "$E/shared/h")" = "$U2" ] &&
	ok "squash: root's file is owned by $U2" || bad "squash: owner of h"
expect_fail "squash: root is squashed too (cannot read $U1's 0600 file)" "Permission denied" as root cat /shared/f1

# --allow-users: only U1 may attach.
start --multi-user --allow-users "$U1" "$E"
as "$U1" ls /shared >/dev/null && ok "allow-users: $U1 attaches" || bad "allow-users: $U1 refused"
expect_fail "allow-users: $U2 is refused" "Permission denied" as "$U2" ls /shared
expect_fail "allow-users: root is refused" "Permission denied" as root ls /

# --read-only: every modification is EROFS.
start --read-only "$E"
snap() { (cd "$E" && find . -printf '%p %m %s %U %T@\n' | sort) }
snap >"$W/before"
RO="Read-only file system"
[ "$(as root cat /hostfile)" = "host file" ] && ok "read-only: reads work" || bad "read-only: read"
expect_fail "read-only: write" "$RO" sh -c "echo x | '$NINEP' -a 'unix:$W/sock' write /hostfile"
expect_fail "read-only: create" "$RO" sh -c "echo x | '$NINEP' -a 'unix:$W/sock' write /newfile"
expect_fail "read-only: mkdir" "$RO" as root mkdir /newdir
expect_fail "read-only: rm" "$RO" as root rm /hostfile
expect_fail "read-only: rmdir" "$RO" as root rm -r /shared/d1
expect_fail "read-only: mv" "$RO" as root mv /hostfile /moved
expect_fail "read-only: ln -s" "$RO" as root ln -s /hostfile /sl
expect_fail "read-only: ln" "$RO" as root ln /hostfile /hl
expect_fail "read-only: chmod" "$RO" as root chmod 0777 /hostfile
expect_fail "read-only: chown" "$RO" as root chown 1:1 /hostfile
expect_fail "read-only: truncate" "$RO" as root truncate -s 0 /hostfile
expect_fail "read-only: setfattr" "$RO" as root setfattr -n user.x -v y /hostfile
snap >"$W/after"
cmp -s "$W/before" "$W/after" && ok "read-only: the export is unchanged" || { bad "read-only: export changed"; diff "$W/before" "$W/after"; }
stop

[ $FAILS -eq 0 ] && echo "all passed" || echo "$FAILS failed"
exit $((FAILS != 0))
