#!/bin/sh
# extract-vmlinux.sh BZIMAGE OUT: write the ELF vmlinux inside a bzImage.
# The bzImage carries the kernel as one compressed payload; we find the first
# compression magic from which a decompressor yields an ELF file. QEMU can
# boot that ELF directly through its PVH note, which is much faster than
# letting the guest decompress itself under emulation.
set -eu
in=$1
out=$2
tmp=$out.tmp.$$
trap 'rm -f "$tmp"' EXIT

try() { # try MAGIC-REGEX DECOMPRESSOR...
	magic=$1
	shift
	for off in $(LC_ALL=C grep -obUaP "$magic" "$in" | cut -d: -f1); do
		tail -c +$((off + 1)) "$in" | "$@" > "$tmp" 2>/dev/null || true
		if [ "$(head -c 4 "$tmp" | od -An -c | tr -d ' ')" = '177ELF' ]; then
			mv "$tmp" "$out"
			exit 0
		fi
	done
}

try '\xfd7zXZ\x00' xz -dc --single-stream
try '\x1f\x8b\x08' gzip -dc
try '\x28\xb5\x2f\xfd' zstd -dc
try '\x5d\x00\x00\x00' xz -dc --format=lzma
try '\x02\x21\x4c\x18' lz4 -dc
try 'BZh' bzip2 -dc
echo "extract-vmlinux: no known compressed ELF payload in $in" >&2
exit 1
