#!/bin/sh
# SPDX-License-Identifier: MIT
# A slowdown is judged over its whole length: the cause that held for most of
# the episode, in the summary JSON, the log, the human summary and the chart.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS

# --- a slowdown is judged over its whole length ------------------------------------------
# the power-cap reason comes on with the drop, sw_thermal_slowdown a moment later
# and stays on, the die warming at flat power: the episode is thermal's
grep -v -e '^temp' -e '^reasons' -e '^viol' -e '^power ' "$SC/gb10.scn" >"$TMP/pt.scn"
cat >>"$TMP/pt.scn" <<'SCN'
temp 0 @0-7 70..88
power 0 100000
reasons 0 0
reasons 0 @1.0 0x4
reasons 0 @2.2 0x20
viol_thermal 0 0
viol_power 0 0
SCN
cp -r "$FIX/gb10-idle" "$TMP/pt"
( cd "$TMP" && env SPARKOPS_NVML_LIB=$FAKE_NVML FAKE_NVML_SCENARIO=$TMP/pt.scn $S run --interval 0.15 --baseline-window 0.6 \
	--log pt.csv --summary pt.json --procfs "$TMP/pt/proc" --sysfs "$TMP/pt/sys" -- "$BUILD_DIR/progress_child" tqdm 10 1.2 5 6 \
	>pt.out 2>pt.err )
OUT=$TMP/pt.json
expect_jq '.episodes | length == 1' "one episode"
expect_jq '.episodes[0].cause == "thermal"' "judged over its length, the episode is thermal (the power cap came first)"
expect_jq '.episodes[0].cause_share_pct >= 60 and (.episodes[0].other_causes_pct.power_cap // 0) < 40' "with its share and the others'"
OUT=$TMP/pt.csv
expect_out ',event,episode_(update|end),"?cause=thermal share_pct=' "the log's last episode row carries the cause over the whole episode"
OUT=$TMP/pt.err
expect_out 'slowdown +[0-9:]+-[0-9:]+ thermal [0-9]+%' "the summary's slowdown line says thermal with its share"
$S report --svg "$TMP/pt.svg" "$TMP/pt.csv" >/dev/null 2>&1
OUT=$TMP/pt.svg
expect_out 'data-cause="thermal"' "the chart labels the episode thermal, as it shades it"
expect_no_out 'slowdown: power_cap' "not under a power_cap label"

done_testing
