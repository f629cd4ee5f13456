#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs every test against one build folder: the cmocka unit binaries and the
# CLI scripts (tests/cli/test_*.sh, TAP-style "ok"/"not ok" lines).
# Ends with "N passed, N failed" and exits non-zero when anything failed.
BUILD=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
export SPARKOPS="$top/$BUILD/sparkops"
export FAKE_NVML="$top/$BUILD/libfake-nvml.so"
export FAKE_NVML_OLD="$top/$BUILD/libfake-nvml-old.so"
export BUILD_DIR="$top/$BUILD"
export FIX="$top/tests/fixtures"
export NO_COLOR=1
# keep the developer's own state and environment out of the tests
unset SPARKOPS_PROCFS SPARKOPS_SYSFS SPARKOPS_NVML_LIB FAKE_NVML_SCENARIO SPARKOPS_PAGE_SIZE SPARKOPS_NO_GPU_THREAD
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

passed=0
failed=0
failures=""
log=$(mktemp)
# the running jobs' status files (watch/jobstat.h) go here, not into the
# machine's /run/sparkops (a test that SIGKILLs sparkops leaves one behind)
XDG_RUNTIME_DIR=$(mktemp -d)
export XDG_RUNTIME_DIR
trap 'rm -f "$log"; rm -rf "$XDG_RUNTIME_DIR"' EXIT

for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	if "$t" >"$log" 2>&1; then
		n=$(grep -c '^\[       OK \]' "$log")
		passed=$((passed + n))
		echo "unit  $(basename "$t"): $n passed"
	else
		n_ok=$(grep -c '^\[       OK \]' "$log")
		n_bad=$(grep -c '^\[  FAILED  \]' "$log")
		[ "$n_bad" -gt 0 ] || n_bad=1
		passed=$((passed + n_ok))
		failed=$((failed + n_bad))
		failures="$failures $(basename "$t")"
		cat "$log"
	fi
done

for t in tests/cli/test_*.sh; do
	[ -f "$t" ] || continue
	sh "$t" >"$log" 2>&1
	rc=$?
	n_ok=$(grep -c '^ok ' "$log")
	n_bad=$(grep -c '^not ok ' "$log")
	if [ $rc -ne 0 ] && [ "$n_bad" -eq 0 ]; then n_bad=1; fi
	passed=$((passed + n_ok))
	failed=$((failed + n_bad))
	if [ "$n_bad" -gt 0 ]; then
		failures="$failures $(basename "$t")"
		cat "$log"
	else
		echo "cli   $(basename "$t"): $n_ok passed"
	fi
done

[ -n "$failures" ] && echo "failing:$failures"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
