#!/usr/bin/env bash
# Build ninep and run every test, the way CI does:
#   1. gcc, -Werror: the whole suite (unit, integration, interop with diod,
#      FUSE, the Linux kernel client in a VM)
#   2. AddressSanitizer + UndefinedBehaviorSanitizer (+ buffer poisoning):
#      the whole suite but the VM
#   3. ThreadSanitizer (clang): the concurrency tests
#   4. valgrind memcheck: the server-core, adapter and client tests
#   5. libFuzzer (clang): each fuzz target for a bounded time
# Ends with one line "N passed, N failed".
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
"$top/scripts/deps.sh" test || exit 1
fuzz_seconds=${NINEP_FUZZ_SECONDS:-30}
jobs=$(nproc)
passed=0 failed=0
failed_stages=()

count() { # add a meson build's results to the totals
	local log=$1/meson-logs/testlog.json
	[ -f "$log" ] || return 0
	local p f
	p=$(grep -c '"result": "OK"' "$log" || true)
	f=$(grep -Ec '"result": "(FAIL|TIMEOUT|ERROR|UNEXPECTEDPASS)"' "$log" || true)
	passed=$((passed + p))
	failed=$((failed + f))
}

stage() { # stage NAME BUILDDIR "meson setup args" "meson test args"
	local name=$1 dir=$2 setup=$3 targs=$4
	echo "=== $name"
	if [ ! -f "$dir/build.ninja" ]; then
		# shellcheck disable=SC2086
		if ! meson setup "$dir" $setup >"$dir.setup.log" 2>&1; then
			cat "$dir.setup.log"; failed=$((failed + 1)); failed_stages+=("$name (setup)"); return
		fi
	fi
	if ! ninja -C "$dir" -j "$jobs" >"$dir.build.log" 2>&1; then
		tail -50 "$dir.build.log"; failed=$((failed + 1)); failed_stages+=("$name (build)"); return
	fi
	rm -f "$dir/meson-logs/testlog.json"
	# shellcheck disable=SC2086
	meson test -C "$dir" --print-errorlogs $targs || failed_stages+=("$name")
	count "$dir"
}

stage "gcc -Werror" build-ci "-Dwerror=true" ""
stage "asan+ubsan" build-asan "-Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false -Dbufdebug=true" \
	"--no-suite vm --no-suite slow"
CC=clang stage "tsan" build-tsan "-Dwerror=true -Db_sanitize=thread -Db_lundef=false" "--suite concurrency"
echo "=== valgrind memcheck (server, adapter and client tests)"
rm -f build-ci/meson-logs/testlog.json
meson test -C build-ci --print-errorlogs --suite memcheck --timeout-multiplier 4 \
	--wrapper "valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --quiet" ||
	failed_stages+=("valgrind")
count build-ci

if [ -f tests/fuzz/meson.build ]; then
	echo "=== fuzz (${fuzz_seconds}s per target)"
	if [ ! -f build-fuzz/build.ninja ]; then
		CC=clang meson setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false >build-fuzz.setup.log 2>&1
	fi
	if ninja -C build-fuzz >build-fuzz.build.log 2>&1 &&
	   tests/fuzz/run-fuzzers.sh build-fuzz "$fuzz_seconds"; then
		passed=$((passed + 1))
	else
		tail -30 build-fuzz.build.log; failed=$((failed + 1)); failed_stages+=("fuzz")
	fi
fi

[ ${#failed_stages[@]} -gt 0 ] && echo "failed stages: ${failed_stages[*]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ ${#failed_stages[@]} -eq 0 ]
