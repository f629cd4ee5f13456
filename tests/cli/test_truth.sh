#!/bin/sh
# SPDX-License-Identifier: MIT
# "Every message true": what a new user's trial found (one section per item).
. "$(dirname "$0")/lib.sh"
SC="$(dirname "$0")/../fake-nvml/scenarios"
S=$SPARKOPS
NODRV="env SPARKOPS_NVML_LIB=/nonexistent/libnvidia-ml.so.1"
GB10="env SPARKOPS_NVML_LIB=$FAKE_NVML FAKE_NVML_SCENARIO=$SC/gb10.scn"
DISC="env SPARKOPS_NVML_LIB=$FAKE_NVML FAKE_NVML_SCENARIO=$SC/discrete.scn"

# --- 2. a size without a unit is an error, everywhere sizes are taken ---------------
run $NODRV $S $(sysroot no-gpu) plan --params 8e9 --method lora --budget 10
expect_rc 2 "plan --budget 10 is refused"
expect_err "'10' is not a size: give a unit \(e.g. 10GiB\)" "and the message asks for a unit"
run $NODRV $S $(sysroot no-gpu) plan --params 8e9 --method lora --budget 10GiB
expect_rc_not2() { [ "$RC" != 2 ]; _report $? "$1"; }
expect_rc_not2 "--budget 10GiB is taken"
for o in "status --reserve 8" "status --min-rss 100" "run --guard-min-free 4 -- true" "watch --reserve 8 --pid 1" "plan --params 8e9 --reserve 4"; do
	run $NODRV $S $(sysroot no-gpu) $o
	expect_rc 2 "$o: a unitless size is refused"
	expect_err "is not a size: give a unit" "$o: says so"
done
run $NODRV $S $(sysroot no-gpu) plan --params 8e9 --method lora --cohost ollama:12
expect_rc 2 "--cohost ollama:12 is refused"
expect_err "'ollama:12' is not a size: give a unit \\(e.g. ollama:12GiB\\)" "and says to give a unit"

# --- 1. a slowdown is judged over its whole length ------------------------------------------
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

# --- 3. status names the quantity that is low -----------------------------------------
run $NODRV $S status --reserve 8GiB $(sysroot gb10-loaded)
expect_rc 1 "a budget under 1 GiB is trouble"
expect_out 'TROUBLE: the budget \(MemFree 6\.2 GiB - reserve 8\.0 GiB\) is 0\.0 GiB, under 1 GiB' "it is the budget that is low, said with MemFree and the reserve"
expect_no_out 'under 1 GiB free' "not 'under 1 GiB free' while MemFree is 6.2 GiB"

# --- 4. human text in human units; the log keeps bytes ----------------------------------------
sed 's/guard_warn,free=2.1GiB floor=2GiB/guard_warn,free_bytes=21468246016 floor_bytes=8589934592/' \
	"$FIX/logs/thermal-guard.csv" >"$TMP/gb.csv"
run $S report "$TMP/gb.csv"
expect_out 'guard +[0-9:]+ warn free=20\.0 GiB floor=8\.0 GiB' "the summary's guard line in GiB"
expect_no_out 'free_bytes=|21468246016' "no raw bytes in the human summary"
run $S report --json "$TMP/gb.csv"
expect_jq '.guard_actions[0].detail | test("free_bytes=21468246016")' "the JSON keeps the log's bytes"

# --- 6. caps past the pool are said; no made-up percentage of a zero budget --------------------
run $NODRV $S plan llama-3.1-8b --method lora --cohost vllm:0.95 --cohost vllm:0.2 $(sysroot gb10-idle)
expect_out 'OVER-COMMITTED: .*115% of the' "vllm 0.95 + 0.2 is said to over-commit the pool"
expect_no_out '200%' "no '200%' of a 0.0 GiB budget"
expect_out 'over: the budget is 0' "the bars say the budget is 0"
run $NODRV $S plan llama-3.1-8b --method lora --cohost vllm:0.95 --cohost vllm:0.2 --json $(sysroot gb10-idle)
expect_jq '.cohosts_overcommitted == true' "JSON: cohosts_overcommitted"

# --- 7. one diagnosis on the USB-PD fixture ----------------------------------------------
run $NODRV $S status $(sysroot gb10-usbpd)
expect_rc 1 "USB-PD safety mode is trouble"
expect_out '^verdict:.*USB-PD safety mode' "the verdict names USB-PD safety mode"
expect_no_out '^verdict:.*PL1 at its cap \(the platform' "and not also the platform's sustained limit"
expect_no_out 'sustained limit|half speed' "no sustained-limit or half-speed claim anywhere"
expect_out '20 W of its 140 W rating' "the cap is put against the rating"

# --- 10. catalog and anchor slips are said -------------------------------------------------------
P="$NODRV $S $(sysroot no-gpu) plan"
run $P llama-3-70b-instruct --budget 100GiB
expect_rc 2 "an unknown name is refused"
expect_err "nearest catalog names: llama-3\.1-70b" "with the nearest names offered"
run $P llama-3-8b --budget 100GiB
expect_err "'llama-3-8b' is planned as the catalog's llama-3\.1-8b" "an alias naming another release is said"
run $P gpt-oss-120b --method infer --quant none --budget 200GiB
expect_err -- "--quant none does not apply: gpt-oss-120b is stored pre-quantized" "--quant on pre-quantized weights is said, not ignored"
expect_no_out 'grad-ckpt|adamw' "the infer plan has no grad-ckpt or optimizer"
expect_no_out 'saved for backward' "nor activations saved for backward"

# --- 12. watch --pid: the summary says how the watch ended, as the log does ---------------
sleep 1 &
sp=$!
run env SPARKOPS_NVML_LIB=/nonexistent $S watch --pid $sp --interval 0.2 --log "$TMP/w.csv" --summary "$TMP/w.json" $(sysroot gb10-idle)
wait $sp
OUT=$TMP/w.json
expect_jq '.ended_by == "pid_ended"' "summary JSON: ended_by pid_ended, not null"
OUT=$TMP/w.csv
expect_out ',event,stop,reason=pid_ended' "the log says pid_ended"
OUT=$ERR
expect_out 'ended +by pid_ended' "the human summary says it too"

# --- 12. usage and help say what the code takes ------------------------------------------
run $S status --help
expect_out -- '--min-rss SIZE\] \[--no-processes\]' "status usage lists --min-rss and --no-processes"
run $S serve --help
expect_out 'SPARKOPS_MHD_LIB' "serve --help names SPARKOPS_MHD_LIB"

done_testing
