#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs the tests against one build folder with prove(1) (TAP::Harness), in
# parallel: the cmocka unit binaries (TAP through CMOCKA_MESSAGE_OUTPUT) and
# the CLI scripts (tests/cli/test_*.sh, TAP with a closing plan).
#   scripts/run-tests.sh [BUILD] [NAME...]
# NAME selects files by name (test_pool or pool: the unit binary and the
# script of that name; test_pool.sh: the script; a path: that file; `make
# test T=NAME`). JOBS (default:
# 4 per online CPU: the scripts mostly wait on the programs they start; on
# 2 cores -j8 took 57 s where -j4 took 85) sets prove -j; PROVE_FLAGS adds prove options (--state=failed,save).
# Ends with "N passed, N failed" (the ok / not ok lines of every file, a
# file that crashed or broke its plan counting as one failure) and exits
# non-zero when anything failed.
BUILD=${1:-build}
[ $# -gt 0 ] && shift
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
command -v prove >/dev/null || { echo "run-tests: prove(1) is missing (apt-get install perl)"; exit 2; }

work=$(mktemp -d)
# the unit binaries' own root (each CLI script makes its own in lib.sh): the
# job status files and the ladder's state never go to /run/sparkops or ~
export SPARKOPS_RUN_DIR="$work/sparkops-root" XDG_RUNTIME_DIR="$work/xdg-runtime"
mkdir -m 0700 "$XDG_RUNTIME_DIR"
export SPARKOPS_TEST_LOGS="$work/logs"
mkdir "$SPARKOPS_TEST_LOGS"
trap 'rm -rf "$work"' EXIT

# what is in the repository beyond the build folders, before and after: the
# suite must leave nothing there (a default log, a core file)
left() {
	git -C "$top" status --porcelain --ignored --untracked-files=all 2>/dev/null |
		grep -Ev '^(!!|\?\?) (build[^/]*/|\.prove$)' | grep -E '^(!!|\?\?) ' | sort
}
left >"$work/before"

want() { # file : selected by the NAME arguments (all when none)
	[ -z "$names" ] && return 0
	b=$(basename "$1")
	for n in $names; do
		[ "$n" = "$1" ] && return 0 # a path, as the Makefile's unit/cli give
		case $n in */*) continue ;; esac
		n=test_${n#test_}
		{ [ "$b" = "$n" ] || [ "$b" = "$n.sh" ]; } && return 0
	done
	return 1
}
names="$*"
# the longest first (measured: `make test` prints each file's time), so
# that -j overlaps them with the rest; the longest file bounds the wall time
slow="test_nodes test_inputs_attack test_ladder test_guard_pool test_procscan test_serve_ratelimit
	test_serve_slowloris test_webpage test_status test_run_ladder test_load_guard_evict test_plan_accuracy
	test_docs_examples test_report test_run_guard test_evict_owner test_postmortem test_evict test_serve_secure
	test_top test_serve test_metrics test_run_attr test_status_line test_serve_limits test_gpu_lost
	test_stream_outputs test_driver_live test_guard_tree test_attack_outputs_stalled test_slowdown_cause
	test_follow test_statusline_tqdm"
slow=$(for t in $slow; do printf 'tests/cli/%s.sh ' "$t"; done)
files=""
for t in $slow tests/cli/test_*.sh "$BUILD"/tests/test_*; do
	[ -f "$t" ] || continue
	case $t in *.sh) ;; *) [ -x "$t" ] || continue ;; esac
	case " $files " in *" $t "*) continue ;; esac
	want "$t" && files="$files $t"
done
[ -n "$files" ] || { echo "run-tests: no test file named: $names"; exit 2; }
n=$(($(nproc 2>/dev/null || echo 1) * 4))
# The scripts that flush the machine's own page cache (drop_caches, the load
# guard) and those that measure files' residency in it run one at a time (a
# flush beside a residency check fails it), beside all the others: each
# takes the lock $SPARKOPS_TEST_LOCK in tap-exec.sh (prove --rules seq= would
# run them after all the others, one long tail).
export SPARKOPS_TEST_SERIAL="test_evict.sh test_evict_owner.sh test_guard_pool.sh test_ladder_flush.sh test_load_guard.sh test_load_guard_evict.sh"
export SPARKOPS_TEST_LOCK="$work/page-cache.lock"
# shellcheck disable=SC2086 # word lists
prove -j"${JOBS:-$n}" --timer --exec "$top/scripts/tap-exec.sh" $PROVE_FLAGS $files
prc=$?

passed=0
failed=0
failures=""
for t in $files; do
	b=$(basename "$t")
	l="$SPARKOPS_TEST_LOGS/$b"
	n_ok=$(grep -c '^ok\( \|$\)' "$l.out" 2>/dev/null)
	n_bad=$(grep -c '^not ok\( \|$\)' "$l.out" 2>/dev/null)
	rc=$(cat "$l.rc" 2>/dev/null || echo 1)
	[ "$rc" != 0 ] && [ "${n_bad:-0}" -eq 0 ] && n_bad=1
	passed=$((passed + ${n_ok:-0}))
	failed=$((failed + n_bad))
	if [ "$n_bad" -gt 0 ]; then
		failures="$failures $b"
		echo "==== $b (exit $rc)"
		cat "$l.out" "$l.err"
	fi
done
left >"$work/after"
extra=$(comm -13 "$work/before" "$work/after")
if [ -n "$extra" ]; then
	echo "not ok - the suite left files in the repository:"
	echo "$extra" | sed 's/^/#   /'
	failed=$((failed + 1))
	failures="$failures (files-left)"
fi
[ "$prc" -ne 0 ] && [ "$failed" -eq 0 ] && { failed=1; failures="$failures (prove: exit $prc)"; }
[ -n "$failures" ] && echo "failing:$failures"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
