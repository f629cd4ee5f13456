#!/bin/sh
# SPDX-License-Identifier: MIT
# A GPU lost (GPU_IS_LOST on every query) or hung (a call that never
# returns) mid-run is said at once: a terminal line, an event row, a summary
# line and the exposition's nvml source; and again when it answers.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
SC="$(cd "$(dirname "$0")/../fake-nvml/scenarios" && pwd)"
if [ -n "$SPARKOPS_UNDER_QEMU" ]; then
	skip_case "a GPU lost mid-run" "'run' starts threads (qemu-user)"
	done_testing
	exit $?
fi
cd "$TMP" || exit 2
FN="env SPARKOPS_NVML_LIB=$FAKE_NVML"

# lost from t = 1 s, never back
run $FN FAKE_NVML_SCENARIO="$SC/lost-midrun.scn" $S run --interval 0.25 --log lost.csv -- sleep 2.5
expect_rc 0 "the job's own exit status"
expect_err 'warning: the GPU stopped answering at [0-9:]+ \(gpu_lost\)' "said on the terminal at once"
grep -q ',event,gpu_unavailable,gpu_lost' lost.csv
_report $? "an event row with the reason"
expect_err '^  GPU +unavailable 1 time, [0-9.]+s in all \(gpu_lost from [0-9:]+\); not answering at the end' \
	"the summary says it, and that it had not come back"
run $S report lost.csv --json
expect_jq '.gpu_unavailable.count == 1 and .gpu_unavailable.reason == "gpu_lost" and .gpu_unavailable.back_by_end == false and .gpu_unavailable.seconds > 0.5' \
	"report --json: gpu_unavailable"
run $S report lost.csv
expect_out '^  GPU +unavailable 1 time' "report's summary says it too"

# lost for a second, then back
cat >back.scn <<'SCN'
count - 1
name 0 NVIDIA GB10
temp 0 70
power 0 90000
sm_clock 0 2400
sm_clock_max 0 3003
util_gpu 0 95
reasons 0 0x0
mem_total 0 NOT_SUPPORTED
temp 0 @1 GPU_IS_LOST
power 0 @1 GPU_IS_LOST
sm_clock 0 @1 GPU_IS_LOST
util_gpu 0 @1 GPU_IS_LOST
reasons 0 @1 GPU_IS_LOST
temp 0 @2 70
power 0 @2 90000
sm_clock 0 @2 2400
util_gpu 0 @2 95
reasons 0 @2 0x0
SCN
run $FN FAKE_NVML_SCENARIO="$TMP/back.scn" $S run --interval 0.25 --log back.csv -- sleep 3.5
expect_err 'the GPU stopped answering' "lost: said"
expect_err 'warning: the GPU answers again at [0-9:]+, after [0-9.]+s' "back: said, with how long it was gone"
grep -q ',event,gpu_available,' back.csv
_report $? "back: an event row"
expect_err '^  GPU +unavailable 1 time, .*; it answered again' "the summary says it came back"

# a driver call that hangs mid-run: the deadline gives 'timeout'
cat >hang.scn <<'SCN'
count - 1
name 0 NVIDIA GB10
temp 0 70
power 0 90000
power 0 @1 hang
mem_total 0 NOT_SUPPORTED
SCN
run $FN FAKE_NVML_SCENARIO="$TMP/hang.scn" $S run --interval 0.25 --log hang.csv -- sleep 2.5
expect_rc 0 "a hung driver does not hold the job"
expect_err 'the GPU stopped answering at [0-9:]+ \(timeout\)' "a hang is said on the terminal"
expect_err '^  GPU +unavailable 1 time.*\(timeout from' "and in the summary"

# the exposition: the nvml source is down with the reason while the GPU is lost
run $FN FAKE_NVML_SCENARIO="$SC/lost.scn" $S metrics $(sysroot gb10-loaded)
expect_out '^sparkops_source_ok\{source="nvml",status="gpu_lost"\} 0$' "the exposition: nvml down, gpu_lost"
done_testing
