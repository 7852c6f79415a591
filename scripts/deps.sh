#!/usr/bin/env bash
# Install what ninep needs from Debian's packages, only what is missing.
#   deps.sh build   compiler, Meson, libraries
#   deps.sh test    all of the above plus test tools and peers (diod, QEMU, ...)
set -euo pipefail
what=${1:-build}
build_pkgs=(gcc pkg-config meson ninja-build libcmocka-dev libfuse3-dev fuse3)
test_pkgs=(clang libclang-rt-14-dev valgrind diod qemu-system-x86 busybox-static cpio xz-utils
           zstd kmod attr python3 procps util-linux file binutils passwd)
pkgs=("${build_pkgs[@]}")
[ "$what" = test ] && pkgs+=("${test_pkgs[@]}")

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "deps.sh: missing packages: ${missing[*]} (run as root to install them)" >&2
	exit 1
fi
echo "deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
