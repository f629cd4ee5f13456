#!/bin/sh
# SPDX-License-Identifier: MIT
# Issue 24: '-' (standard output) as the log is written in place without
# ever waiting: a pipe whose reader stops reading costs rows, counted in the
# summary and said, never a hung watch. And --summary's folder, resolved and
# held at the start, may still be made by the job itself.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
I=$(sysroot gb10-idle)

# the pipe is filled first (64 KiB of zeros nobody reads), then watch logs
# into it for 2 s: it must end in about 2 s, saying how many rows it dropped
t0=$(date +%s)
{ head -c 65536 /dev/zero; timeout 30 $S watch $I --count 40 --interval 0.05 --log - --summary "$TMP/s.json" 2>"$ERR"; echo $? >"$TMP/rc"; } | sleep 8 &
i=0
while [ ! -s "$TMP/rc" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
t1=$(date +%s)
RC=$(cat "$TMP/rc" 2>/dev/null)
[ "$RC" = 0 ] && [ $((t1 - t0)) -le 6 ]
_report $? "watch --log - into a pipe nobody reads ends on time ($((t1 - t0)) s, exit $RC)"
expect_err "'-': [0-9]+ rows dropped: its reader stopped reading" "the dropped rows are said"
jq -e '.log_rows_dropped > 0' "$TMP/s.json" >/dev/null 2>&1
_report $? "and counted in the summary (log_rows_dropped)"
wait

# a reader that reads gets every row, and none is counted dropped
run sh -c "$S watch $I --count 5 --interval 0.05 --log - --summary '$TMP/t.json' | cat"
[ "$(grep -c ',sample,' "$OUT")" = 5 ]
_report $? "--log - into a pipe that is read: all 5 samples"
jq -e '.log_rows_dropped == 0' "$TMP/t.json" >/dev/null 2>&1
_report $? "none dropped"

# the job makes the summary's folder: written there at the end
mkdir "$TMP/job"
run sh -c "cd '$TMP/job' && $S run $I --interval 0.1 --log l.csv --summary out/run.json -- mkdir out"
expect_rc 0 "run --summary into a folder the job makes"
jq -e '.exit_code == 0' "$TMP/job/out/run.json" >/dev/null 2>&1
_report $? "the summary is there"
done_testing
