#!/bin/sh
# Run the `ninep` command's test script against a private ninepd.
#   ninepd-cli.sh NINEPD NINEP NINEP-CLI-SCRIPT passthrough|ramfs
set -u
NINEPD=$1 NINEP=$2 SCRIPT=$3 MODE=$4
W=$(mktemp -d /tmp/ninepd-cli.XXXXXX)
PID=
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID"; rm -rf "$W"; }
trap cleanup EXIT INT TERM
mkdir "$W/export"
if [ "$MODE" = ramfs ]; then set -- --ramfs; else set -- "$W/export"; fi
"$NINEPD" --listen "unix:$W/sock" "$@" 2>"$W/log" &
PID=$!
i=0; while [ ! -S "$W/sock" ] && [ $i -lt 250 ]; do sleep 0.02; i=$((i + 1)); done
[ -S "$W/sock" ] || { echo "ninepd did not start"; cat "$W/log"; exit 1; }
sh "$SCRIPT" "$NINEP" "unix:$W/sock" ""
rc=$?
kill "$PID"; wait "$PID"; st=$?; PID=
[ $st -eq 0 ] || { echo "ninepd exited $st"; cat "$W/log"; rc=1; }
exit $rc
