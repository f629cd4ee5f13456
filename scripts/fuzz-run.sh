#!/bin/sh
# SPDX-License-Identifier: MIT
# Run libFuzzer harnesses: scripts/fuzz-run.sh SECONDS build-fuzz/fuzz_NAME...
# For each: replay fuzz/regressions/NAME/* (every crash ever found, must stay
# fixed), then fuzz for SECONDS from a temporary copy of fuzz/corpus/NAME/
# (the tree stays clean). New crashes land in build-fuzz/artifacts/NAME/.
# One summary line per harness goes to build-fuzz/fuzz-summary.txt:
#   NAME  SECONDS  EXECUTIONS  ok|CRASH
# Exits non-zero when any harness crashed or a regression input fails.
secs=${1:?usage: fuzz-run.sh SECONDS BIN...}
shift
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
summary=build-fuzz/fuzz-summary.txt
: >"$summary"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
failed=0
for bin in "$@"; do
	name=$(basename "$bin" | sed 's/^fuzz_//')
	log=build-fuzz/fuzz_$name.log
	if [ -d "fuzz/regressions/$name" ] && [ -n "$(ls -A "fuzz/regressions/$name")" ]; then
		if ! "$bin" fuzz/regressions/"$name"/* >"$log" 2>&1; then
			echo "fuzz  $name: a regression input crashes again (see $log)"
			tail -30 "$log"
			failed=1
			echo "$name 0 0 REGRESSION" >>"$summary"
			continue
		fi
	fi
	work=$(mktemp -d)
	[ -d "fuzz/corpus/$name" ] && cp -R "fuzz/corpus/$name/." "$work/"
	mkdir -p "build-fuzz/artifacts/$name"
	# libFuzzer stops once the whole seconds since its start exceed
	# -max_total_time (N fuzzes N+1 s): N-1 fuzzes the N seconds asked for
	"$bin" -max_total_time="$((secs > 1 ? secs - 1 : secs))" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
		-print_final_stats=1 -artifact_prefix="build-fuzz/artifacts/$name/" "$work" >"$log" 2>&1
	rc=$?
	rm -rf "$work"
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	if [ $rc -ne 0 ]; then
		failed=1
		echo "fuzz  $name: CRASH after ${execs:-?} executions (artifact in build-fuzz/artifacts/$name/, log $log)"
		grep -E 'ERROR|SUMMARY|runtime error' "$log" | head -5
		echo "$name $secs ${execs:-0} CRASH" >>"$summary"
	else
		echo "fuzz  $name: ${execs:-?} executions in ${secs}s, no crash"
		echo "$name $secs ${execs:-0} ok" >>"$summary"
	fi
done
exit $failed
