#!/bin/sh
# The daemon's life: startup errors, stale sockets, -d tracing, --listen
# stdio, orderly SIGTERM; and diod's client tools against ninepd.
#   ninepd-life.sh NINEPD NINEP          the daemon's life
#   ninepd-life.sh NINEPD NINEP diod     diod's client tools against it
set -u
NINEPD=$1 NINEP=$2 PART=${3:-life}
W=$(mktemp -d /tmp/ninepd-life.XXXXXX)
PIDS=
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT INT TERM
mkdir "$W/export"
printf 'hello from ninepd\n' >"$W/export/greeting"
mkdir "$W/export/sub" && : >"$W/export/sub/a" && : >"$W/export/sub/b"

FAILS=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; FAILS=$((FAILS + 1)); }
wait_sock() { i=0; while [ ! -S "$1" ] && [ $i -lt 250 ]; do sleep 0.02; i=$((i + 1)); done; [ -S "$1" ]; }
# startup_error NAME STATUS COMMAND...: exits with STATUS, one line on stderr
startup_error() {
	name=$1 want=$2; shift 2
	timeout 10 "$@" >"$W/out" 2>"$W/err"; rc=$?
	lines=$(grep -c . "$W/err")
	# Exit 1: one line "ninepd: ...".  Exit 2 (usage): the complaint and
	# a hint (getopt's own message names the program by its path).
	if [ $rc -eq "$want" ] && [ "$lines" -ge 1 ] &&
	   { [ "$want" -eq 2 ] || { [ "$lines" -eq 1 ] && grep -q '^ninepd: ' "$W/err"; }; }; then
		ok "$name: exit $rc, '$(head -1 "$W/err")'"
	else
		bad "$name: exit $rc (want $want), stderr:"; sed 's/^/    /' "$W/err"
	fi
}

if [ "$PART" = life ]; then
# ---- startup errors ----
startup_error "missing directory" 1 "$NINEPD" --listen "unix:$W/s0" "$W/nonexistent"
startup_error "a file, not a directory" 1 "$NINEPD" --listen "unix:$W/s0" "$W/export/greeting"
startup_error "bad option" 2 "$NINEPD" --no-such-option "$W/export"
startup_error "bad number" 2 "$NINEPD" --max-fids lots "$W/export"
startup_error "bad address" 1 "$NINEPD" --listen "bogus:x" "$W/export"
"$NINEPD" --listen "unix:$W/live" "$W/export" 2>"$W/live.log" & LIVE=$!; PIDS="$PIDS $LIVE"
wait_sock "$W/live" || bad "first daemon did not start"
startup_error "address in use by a live server" 1 "$NINEPD" --listen "unix:$W/live" "$W/export"
[ -S "$W/live" ] && "$NINEP" -a "unix:$W/live" cat /greeting >/dev/null &&
	ok "the live server still serves its socket" || bad "the live server lost its socket"
kill "$LIVE"; wait "$LIVE"

# ---- a stale socket file is replaced ----
"$NINEPD" --listen "unix:$W/stale" "$W/export" 2>/dev/null & P=$!
wait_sock "$W/stale"; kill -9 "$P"; wait "$P" 2>/dev/null
[ -S "$W/stale" ] || bad "SIGKILL should leave the socket file behind"
"$NINEPD" --listen "unix:$W/stale" "$W/export" 2>"$W/stale.log" & P=$!; PIDS="$PIDS $P"
sleep 0.3
[ "$("$NINEP" -a "unix:$W/stale" cat /greeting 2>&1)" = "hello from ninepd" ] &&
	ok "stale socket replaced" || { bad "stale socket"; cat "$W/stale.log"; }
# ---- SIGTERM: exit 0, socket removed, no more clients ----
kill -TERM "$P"; wait "$P"; rc=$?
[ $rc -eq 0 ] && ok "SIGTERM: exit 0" || bad "SIGTERM: exit $rc"
[ ! -e "$W/stale" ] && ok "SIGTERM: socket file removed" || bad "SIGTERM: socket file left"
"$NINEP" -a "unix:$W/stale" ls / >/dev/null 2>&1 && bad "still answering after exit" || ok "SIGTERM: gone"
# A non-socket file at the address is never removed.
: >"$W/plain"
startup_error "a plain file at the socket path" 1 "$NINEPD" --listen "unix:$W/plain" "$W/export"
[ -f "$W/plain" ] && ok "the plain file survives" || bad "the plain file was removed"

# ---- -d: one line per message ----
"$NINEPD" -d --listen "unix:$W/dbg" "$W/export" 2>"$W/dbg.log" & P=$!; PIDS="$PIDS $P"
wait_sock "$W/dbg"
"$NINEP" -a "unix:$W/dbg" cat /greeting >/dev/null
kill "$P"; wait "$P"
if grep -Eq '<- Tversion tag 65535 msize [0-9]+ .*9P2000.L' "$W/dbg.log" &&
   grep -Eq -- '-> Rversion tag 65535' "$W/dbg.log" &&
   grep -Eq "<- Twalk tag [0-9]+ fid [0-9]+ newfid [0-9]+ nwname 1 'greeting'" "$W/dbg.log" &&
   grep -Eq -- '-> Rread tag [0-9]+ count 18' "$W/dbg.log" &&
   grep -Eq -- '<- Tclunk' "$W/dbg.log"; then
	ok "-d traces T and R messages one per line"
else
	bad "-d trace"; sed 's/^/    /' "$W/dbg.log" | head -30
fi

# ---- --listen stdio: one session on a pipe pair, exit at EOF ----
mkfifo "$W/c2s" "$W/s2c"
"$NINEPD" --listen stdio "$W/export" <"$W/c2s" >"$W/s2c" 2>"$W/stdio.log" & P=$!; PIDS="$PIDS $P"
out=$("$NINEP" -a fd:3,4 cat /greeting 4>"$W/c2s" 3<"$W/s2c" 2>&1)
[ "$out" = "hello from ninepd" ] && ok "stdio: served a session" || { bad "stdio: got '$out'"; cat "$W/stdio.log"; }
i=0; while kill -0 "$P" 2>/dev/null && [ $i -lt 250 ]; do sleep 0.02; i=$((i + 1)); done
if kill -0 "$P" 2>/dev/null; then bad "stdio: still running after EOF"; else
	wait "$P"; rc=$?; [ $rc -eq 0 ] && ok "stdio: exit 0 at EOF" || bad "stdio: exit $rc"; fi

fi

# ---- diod's client tools against ninepd ----
if [ "$PART" != diod ]; then :
elif command -v diodcat >/dev/null && command -v diodls >/dev/null; then
	"$NINEPD" --listen "unix:$W/diod" "$W/export" 2>"$W/diodtools.log" & P=$!; PIDS="$PIDS $P"
	wait_sock "$W/diod"
	out=$(timeout 10 diodcat -s "$W/diod" -a / greeting 2>&1)
	[ "$out" = "hello from ninepd" ] && ok "diodcat reads a file" || bad "diodcat: '$out'"
	out=$(timeout 10 diodls -s "$W/diod" -a / sub 2>&1 | sort | tr '\n' ' ')
	case "$out" in *"a b "*) ok "diodls lists a directory ($out)";; *) bad "diodls: '$out'";; esac
	out=$(timeout 10 diodls -l -s "$W/diod" -a / / 2>&1)
	echo "$out" | grep -q greeting && ok "diodls -l lists the root" || bad "diodls -l: '$out'"
	timeout 20 diodload -s "$W/diod" -r 1 -n 4 -g >"$W/load" 2>&1; rc=$?
	if [ $rc -eq 0 ] && grep -Eq ' [1-9][0-9]* ops/s' "$W/load"; then ok "diodload -g: $(tail -1 "$W/load")"
	else bad "diodload: exit $rc"; tail -5 "$W/load"; fi
	kill "$P"; wait "$P"
else
	echo "diod tools not installed: skipping"; exit 77
fi

[ $FAILS -eq 0 ] && echo "all passed" || echo "$FAILS failed"
exit $((FAILS != 0))
