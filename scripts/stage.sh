#!/bin/sh
# SPDX-License-Identifier: MIT
# One stage of `make check`, timed: scripts/stage.sh NAME CMD...
# Runs CMD, then says on one line what it cost: its wall time and the CPU
# time of everything it started (user + system, from the shell's `times`),
# also appended to $STAGE_TIMES when set. The exit code is CMD's.
name=$1
shift
t0=$(date +%s.%N)
"$@"
rc=$?
t1=$(date +%s.%N)
# times: the shell's own line, then its children's: "XmY.YYYs XmY.YYYs"
# (into a file: in $(...) it would be a subshell's, with no children)
tf=$(mktemp)
times >"$tf"
cpu=$(tail -1 "$tf" | awk '{
	n = 0
	for (i = 1; i <= 2; i++) { split($i, p, "m"); sub(/s$/, "", p[2]); n += p[1] * 60 + p[2] }
	printf "%.1f", n }')
rm -f "$tf"
line=$(awk -v n="$name" -v a="$t0" -v b="$t1" -v c="$cpu" -v r="$rc" \
	'BEGIN { printf "stage %-20s %6.1f s wall %6.1f s CPU%s", n, b - a, c, (r == 0 ? "" : "  FAILED (exit " r ")") }')
echo "$line"
[ -z "$STAGE_TIMES" ] || echo "$line" >>"$STAGE_TIMES"
exit $rc
