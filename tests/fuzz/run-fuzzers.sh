#!/bin/bash
# Run every libFuzzer target found under TARGET_DIR for SECONDS each.
#
#   tests/fuzz/run-fuzzers.sh TARGET_DIR SECONDS
#
# A target is an executable named fuzz-NAME (built with -Dfuzz=true, see
# tests/fuzz/meson.build).  Next to this script, corpus/NAME/ holds its seeds,
# NAME.dict its dictionary and regressions/NAME/ the inputs that once crashed
# it; all are optional.  The known crashers are replayed first, then the
# target fuzzes for SECONDS.  New inputs go to a scratch corpus and crash
# artifacts next to it, under $FUZZ_WORK (default TARGET_DIR/fuzz-work/NAME),
# so the committed seeds are only read.  Environment: FUZZ_RSS_MB (default
# 2048), FUZZ_TIMEOUT per input in seconds (default 10), FUZZ_ARGS extra
# libFuzzer flags.
#
# Exits 0 when every target ran clean, 1 if any crashed, leaked, timed out or
# ran out of memory (artifacts are listed), 2 on usage errors.
set -u

if [ $# -ne 2 ] || ! [ -d "$1" ] || ! [[ "$2" =~ ^[0-9]+$ ]]; then
	echo "usage: $0 TARGET_DIR SECONDS" >&2
	exit 2
fi
target_dir=$1
seconds=$2
src_dir=$(cd "$(dirname "$0")" && pwd)
work_root=${FUZZ_WORK:-$target_dir/fuzz-work}
rss_mb=${FUZZ_RSS_MB:-2048}
per_input=${FUZZ_TIMEOUT:-10}

# Make UBSan findings fatal and give every report a stack.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:abort_on_error=1:print_stacktrace=1}
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}

mapfile -t targets < <(find "$target_dir" -type f -name 'fuzz-*' -perm -u+x | sort)
if [ ${#targets[@]} -eq 0 ]; then
	echo "no fuzz-* executables under $target_dir (configure with -Dfuzz=true)" >&2
	exit 2
fi

failed=()
for exe in "${targets[@]}"; do
	name=$(basename "$exe")
	name=${name#fuzz-}
	work=$work_root/$name
	mkdir -p "$work/corpus" "$work/artifacts"
	log=$work/fuzz.log
	args=(-max_total_time="$seconds" -rss_limit_mb="$rss_mb" -timeout="$per_input"
	      -print_final_stats=1 -artifact_prefix="$work/artifacts/")
	[ -f "$src_dir/$name.dict" ] && args+=(-dict="$src_dir/$name.dict")
	corpora=("$work/corpus")
	[ -d "$src_dir/corpus/$name" ] && corpora+=("$src_dir/corpus/$name")
	# shellcheck disable=SC2206
	extra=(${FUZZ_ARGS:-})

	echo "== fuzz-$name: ${seconds}s, corpus ${corpora[*]}"
	stamp=$work/.started
	touch "$stamp" # artifacts of this run are the files newer than this
	status=0
	regress=()
	if [ -d "$src_dir/regressions/$name" ]; then
		mapfile -t regress < <(find "$src_dir/regressions/$name" -type f ! -name README | sort)
	fi
	if [ ${#regress[@]} -gt 0 ]; then
		if ! "$exe" -rss_limit_mb="$rss_mb" -timeout="$per_input" \
			-artifact_prefix="$work/artifacts/" "${regress[@]}" >"$work/regressions.log" 2>&1; then
			echo "   regressions FAILED, see $work/regressions.log"
			status=1
		else
			echo "   ${#regress[@]} regression inputs pass"
		fi
	fi
	if [ $status -eq 0 ]; then
		"$exe" "${args[@]}" "${extra[@]}" "${corpora[@]}" >"$log" 2>&1
		rc=$?
		# libFuzzer prints its final stats again when it dies: keep the last
		grep -E '^stat::(number_of_executed_units|new_units_added|peak_rss_mb)' "$log" |
			tail -n 3 | sed 's/^/   /'
		[ $rc -ne 0 ] && status=1
	fi
	mapfile -t found < <(find "$work/artifacts" -type f \( -name 'crash-*' -o -name 'leak-*' \
		-o -name 'timeout-*' -o -name 'oom-*' \) -newer "$stamp" 2>/dev/null)
	if [ $status -ne 0 ] || [ ${#found[@]} -gt 0 ]; then
		echo "   FAILED (log $log)"
		for f in "${found[@]}"; do echo "   artifact: $f"; done
		grep -E 'ERROR|runtime error|fuzz-[a-z]+:' "$log" 2>/dev/null | head -5 | sed 's/^/   /'
		failed+=("$name")
	else
		echo "   ok"
	fi
done

if [ ${#failed[@]} -gt 0 ]; then
	echo "failed: ${failed[*]}"
	exit 1
fi
echo "all ${#targets[@]} fuzz targets ran clean"
