#!/bin/sh
# SPDX-License-Identifier: MIT
# make bench: runs every bench/bench_*.sh against one build folder.
BUILD=${1:-build}
cd "$(dirname "$0")/.." || exit 2
rc=0
# the goals first (bench_goals.sh: every row of the cost table), then the rest
for b in bench/bench_goals.sh $(ls bench/bench_*.sh | grep -v '/bench_goals\.sh$'); do
	[ -f "$b" ] || continue
	echo "== $(basename "$b" .sh)"
	sh "$b" "$BUILD" || rc=1
	echo
done
exit $rc
