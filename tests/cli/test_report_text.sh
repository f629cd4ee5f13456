#!/bin/sh
# SPDX-License-Identifier: MIT
# report's human text: sizes in human units while the log keeps bytes.
# The evidence in the log reads as text (spaces kept, the field quoted), old
# logs too; the summary says the job's peak RSS.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS

# --- human text in human units; the log keeps bytes ----------------------------------------
sed 's/guard_warn,free=2.1GiB floor=2GiB/guard_warn,free_bytes=21468246016 floor_bytes=8589934592/' \
	"$FIX/logs/thermal-guard.csv" >"$TMP/gb.csv"
run $S report "$TMP/gb.csv"
expect_out 'guard +[0-9:]+ warn free=20\.0 GiB floor=8\.0 GiB' "the summary's guard line in GiB"
expect_no_out 'free_bytes=|21468246016' "no raw bytes in the human summary"
run $S report --json "$TMP/gb.csv"
expect_jq '.guard_actions[0].detail | test("free_bytes=21468246016")' "the JSON keeps the log's bytes"

# --- the evidence in the log reads as text: spaces kept, the field quoted ----------
# a log from before (evidence with underscores) and one from now (spaces, a comma:
# the field CSV-quoted); report reads both, the evidence whole
sed 's/^\(.*,event,episode_start,\)cause=thermal drop_pct=23.5 baseline=3.10 rate=2.37,/\1cause=thermal drop_pct=23.5 baseline=3.10 rate=2.37 evidence=sw_thermal_slowdown_on,/' \
	"$FIX/logs/thermal-guard.csv" >"$TMP/ev-old.csv"
sed 's/^\(.*,event,episode_start,\)cause=thermal drop_pct=23.5 baseline=3.10 rate=2.37,/\1"cause=thermal drop_pct=23.5 baseline=3.10 rate=2.37 evidence=sw thermal slowdown on, GPU 88 C",/' \
	"$FIX/logs/thermal-guard.csv" >"$TMP/ev-new.csv"
run $S report --json "$TMP/ev-old.csv"
expect_jq '.episodes[0].evidence == "sw_thermal_slowdown_on" and .episodes[0].cause == "thermal"' "an old log: the evidence as it was written"
run $S report --json "$TMP/ev-new.csv"
expect_jq '.episodes[0].evidence == "sw thermal slowdown on, GPU 88 C"' "a new log: the evidence readable, spaces and comma kept"
expect_jq '.episodes[0].cause == "thermal" and (.episodes[0].drop_pct | floor) == 23' "and the keys before it still read"
$S report --svg "$TMP/ev.svg" "$TMP/ev-new.csv" >/dev/null 2>&1
OUT=$TMP/ev.svg
expect_out '<title>slowdown: thermal -24%: sw thermal slowdown on, GPU 88 C</title>' "the chart's episode says its evidence"

# --- the summary says the job's peak RSS (the log's job_rss_bytes) -----------------
run $S report "$FIX/logs/thermal-guard.csv"
expect_out '^  job RSS +peak 30\.0 GiB' "report's summary: the job's peak RSS"
run $S report --json "$FIX/logs/thermal-guard.csv"
expect_jq '.peak_job_rss_bytes == 32212254720' "report --json: peak_job_rss_bytes"

done_testing
