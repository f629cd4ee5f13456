#!/bin/sh
# SPDX-License-Identifier: MIT
# make stress-suite: the whole suite (scripts/run-tests.sh) ROUNDS times in a
# row (default 3) while another `sparkops watch` runs on this machine and
# `stress-ng --cpu N` (default: the online CPUs) loads it. The suite is
# sealed (every test has its own SPARKOPS_RUN_DIR), so neither may change a
# result: every round must pass, and the watch must still be running at the
# end (no test may signal a process it did not start).
#   scripts/stress-suite.sh [BUILD [NAME...]]   (ROUNDS, STRESS_CPUS, STRESS_ROOT)
# NAME: only those files, as with run-tests.sh (`make test T=NAME`).
# STRESS_ROOT=real (default): the watch keeps its status file where a user's
# would (/run/sparkops, or $XDG_RUNTIME_DIR); sealed: under a folder of its own.
BUILD=${1:-build}
[ $# -gt 0 ] && shift
ROUNDS=${ROUNDS:-3}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
S="$top/$BUILD/sparkops"
[ -x "$S" ] || { echo "stress-suite: no $S (make test-bins first)"; exit 2; }
command -v stress-ng >/dev/null || { echo "stress-suite: stress-ng is missing (apt-get install stress-ng; make deps-check)"; exit 2; }
cpus=${STRESS_CPUS:-$(nproc 2>/dev/null || echo 2)}
work=$(mktemp -d)
wpid=""
spid=""
cleanup() {
	[ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
	[ -n "$wpid" ] && kill "$wpid" 2>/dev/null && wait "$wpid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# the other watch: a user's own, sampling every second until we end it
case ${STRESS_ROOT:-real} in
real) env -u SPARKOPS_RUN_DIR "$S" watch --interval 1 --log "$work/watch.csv" >"$work/watch.out" 2>"$work/watch.err" & ;;
sealed) SPARKOPS_RUN_DIR="$work/root" "$S" watch --interval 1 --log "$work/watch.csv" >"$work/watch.out" 2>"$work/watch.err" & ;;
*) echo "stress-suite: STRESS_ROOT is real or sealed, not '$STRESS_ROOT'"; exit 2 ;;
esac
wpid=$!
stress-ng --cpu "$cpus" --timeout 86400 --quiet >"$work/stress.out" 2>&1 &
spid=$!
i=0
while [ $i -lt 100 ] && ! grep -q ',sample,' "$work/watch.csv" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
grep -q ',sample,' "$work/watch.csv" 2>/dev/null || { echo "stress-suite: the background watch did not start:"; cat "$work/watch.err"; exit 1; }
echo "stress-suite: $ROUNDS rounds of the suite ($BUILD) beside 'sparkops watch' (pid $wpid, ${STRESS_ROOT:-real} root) and 'stress-ng --cpu $cpus' (pid $spid)"

failed=0
r=1
: >"$work/summary"
while [ $r -le "$ROUNDS" ]; do
	t0=$(date +%s)
	scripts/run-tests.sh "$BUILD" "$@" >"$work/round.$r" 2>&1
	rc=$?
	t1=$(date +%s)
	line=$(tail -1 "$work/round.$r")
	wall=$(sed -n 's/^Files=\([0-9]*\), Tests=\([0-9]*\), *\([0-9]*\) wallclock.*/\1 files, \2 tests, \3 s/p' "$work/round.$r")
	echo "round $r: $line ($wall; $((t1 - t0)) s in all)" | tee -a "$work/summary"
	if [ $rc -ne 0 ]; then
		failed=$((failed + 1))
		# what failed, and how
		sed -n '/^Test Summary Report/,/^Result:/p' "$work/round.$r"
		sed -n '/^==== /,/^1\.\./p' "$work/round.$r" | head -120
	fi
	kill -0 "$wpid" 2>/dev/null || { echo "stress-suite: the background watch ended during round $r:"; cat "$work/watch.err"; failed=$((failed + 1)); wpid=""; break; }
	r=$((r + 1))
done
if [ -n "$wpid" ]; then
	n=$(grep -c ',sample,' "$work/watch.csv")
	echo "stress-suite: the background watch ran throughout ($n samples)"
fi
[ $failed = 0 ] && echo "stress-suite: $ROUNDS of $ROUNDS rounds passed" || echo "stress-suite: $failed failure(s)"
[ $failed = 0 ]
