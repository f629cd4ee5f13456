#!/bin/sh
# SPDX-License-Identifier: MIT
# `sparkops plan --solve` on a 70B-class model folder: the header-only
# sparse Llama-3.1-70B folder of bench_plan.sh, a binary search over the
# footprint for the largest packing and micro-batch. Budget: 50 ms a run
# (the folder's headers read once, ~20 footprints per search). The limit
# is checked on the CPU time a run takes (user + sys, from /usr/bin/time):
# on a shared, loaded box the wall time measures the queue for a core, not
# the command; both are printed (wall time when /usr/bin/time is missing).
BUILD=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
RUNS=${BENCH_RUNS:-20}
LIMIT_MS=${BENCH_SOLVE_LIMIT_MS:-50}
for tool in python3 jq; do
	command -v $tool >/dev/null 2>&1 || { echo "skip: $tool is not installed (it makes the folder / reads the JSON)"; exit 0; }
done
"$BUILD/sparkops" plan --help 2>/dev/null | grep -q -- '--solve' || { echo "skip: no plan --solve in this build"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dir="$tmp/llama-3.1-70b"
python3 tests/fixtures/models/mkmodels.py --sparse-70b "$dir" >/dev/null || exit 1
rc=0
now() { date +%s.%N; }
for what in seq batch; do
	run_one() { SPARKOPS_NVML_LIB=/nonexistent "$BUILD/sparkops" plan "$dir" --method qlora --solve $what --json --budget 110GiB; }
	run_one >"$tmp/one.json" 2>"$tmp/one.err"
	r=$?
	if [ $r -ne 0 ] && [ $r -ne 1 ]; then
		cat "$tmp/one.err"
		exit 1
	fi
	got=$(jq -r ".solve.max_$what" "$tmp/one.json")
	t0=$(now)
	i=0
	while [ $i -lt "$RUNS" ]; do run_one >/dev/null 2>&1; i=$((i + 1)); done
	t1=$(now)
	ms=$(echo "$t0 $t1 $RUNS" | awk '{printf "%.2f", ($2 - $1) * 1000 / $3}')
	cpu=""
	if [ -x /usr/bin/time ]; then
		export BUILD dir what RUNS
		/usr/bin/time -f '%U %S' -o "$tmp/time" sh -c 'i=0; while [ $i -lt "$RUNS" ]; do
			SPARKOPS_NVML_LIB=/nonexistent "$BUILD/sparkops" plan "$dir" --method qlora --solve $what --json --budget 110GiB >/dev/null 2>&1
			i=$((i + 1)); done' && cpu=$(awk -v n="$RUNS" '{printf "%.2f", ($1 + $2) * 1000 / n}' "$tmp/time")
	fi
	echo "plan --solve $what (70B QLoRA, 110 GiB): max_$what $got, ${ms} ms wall per run, ${cpu:-n/a} ms CPU per run (limit $LIMIT_MS ms)"
	check=${cpu:-$ms}
	if awk -v m="$check" -v l="$LIMIT_MS" 'BEGIN { exit !(m > l) }'; then
		echo "FAIL: plan --solve $what took ${check} ms, over $LIMIT_MS ms"
		rc=1
	fi
done
exit $rc
