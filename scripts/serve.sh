#!/usr/bin/env bash
# The main job: build ninep and serve a directory with ninepd.
#   scripts/serve.sh [DIR] [ninepd options...]
# DIR defaults to ./export (created if missing).  Listens on
# unix:/run/ninepd.sock (or $XDG_RUNTIME_DIR) and tcp:127.0.0.1:5640.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/deps.sh" build
if [ ! -f "$top/build-release/build.ninja" ]; then
	meson setup "$top/build-release" "$top" --buildtype=release -Dtests=false >/dev/null
fi
ninja -C "$top/build-release" >/dev/null
dir=${1:-$top/export}
[ $# -gt 0 ] && shift
mkdir -p "$dir"
rt=${XDG_RUNTIME_DIR:-/run}
echo "serving $dir; try: $top/build-release/tools/ninep/ninep -a unix:$rt/ninepd.sock ls -l /" >&2
exec "$top/build-release/tools/ninepd/ninepd" --listen "unix:$rt/ninepd.sock" \
	--listen tcp:127.0.0.1:5640 "$@" "$dir"
