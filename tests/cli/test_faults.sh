#!/bin/sh
# SPDX-License-Identifier: MIT
# A failing machine: a driver that hangs, answers late, loses the GPU or
# returns nonsense. status must answer within its bound, say what is missing
# and why, and still read everything that does not depend on the GPU.
# Every run is wrapped in a generous `timeout 10` so a regression fails the
# test instead of hanging the suite; the assertions are on what was printed
# and on the process having exited by itself (not 124), never on wall time.
. "$(dirname "$0")/lib.sh"
SC="$(dirname "$0")/../fake-nvml/scenarios"
S=$SPARKOPS
IDLE=$(sysroot gb10-idle)
fake() { # SCENARIO: the env prefix that loads the fake NVML with it
	echo "env SPARKOPS_NVML_LIB=$FAKE_NVML FAKE_NVML_SCENARIO=$SC/$1.scn"
}
exited() { # name: the process ended by itself within the outer timeout
	[ "$RC" != 124 ] && [ "$RC" != 137 ]
	_report $? "$1: the process exited by itself"
}

# --- a call that never returns ------------------------------------------------
run timeout 10 $(fake hang) $S status $IDLE --json
exited "hang, default 2 s bound"
expect_rc 1 "hang: a driver that does not answer is trouble"
expect_jq '.gpu_status == "timeout"' "hang: gpu_status timeout"
expect_jq '.gpu_status_detail | test("nvmlDeviceGetPowerUsage")' "hang: the hung call is named"
expect_jq '.gpus == []' "hang: no readings from an earlier answer are shown"
expect_jq '.pool.total_bytes > 0 and .budget.now_bytes > 0' "hang: the pool is read"
expect_jq '.psi.memory.status == "ok" and (.thermal_zones | length) > 0' "hang: PSI and thermal zones are read"

run timeout 10 $(fake hang) $S status $IDLE --gpu-timeout 200ms
exited "hang, human output"
expect_out '^GPU  the driver did not answer in time \(still in nvmlDeviceGetPowerUsage' "hang: human output says the driver did not answer"
expect_out '^verdict: .*TROUBLE: the NVIDIA driver did not answer in time' "hang: the verdict says so"
expect_out '^POOL  119\.[0-9] GiB total' "hang: the pool is shown"

run timeout 10 $(fake hang-init) $S status $IDLE --json --gpu-timeout 200ms
exited "nvmlInit hangs"
expect_jq '.gpu_status == "timeout" and (.gpu_status_detail | test("nvmlInit"))' "nvmlInit hangs: timeout, named"
expect_jq '.pool.total_bytes > 0' "nvmlInit hangs: the pool is read"

# the library's constructor never returns: dlopen itself hangs, holding the
# dynamic loader's lock
run timeout 10 env FAKE_NVML_HANG_IN_DLOPEN=1 $(fake gb10) $S status $IDLE --json --gpu-timeout 300ms
exited "dlopen hangs"
expect_jq '.gpu_status == "timeout" and (.gpu_status_detail | test("dlopen"))' "dlopen hangs: timeout, named"
expect_jq '.pool.total_bytes > 0 and .psi.memory.status == "ok"' "dlopen hangs: the pool and PSI are read"
run timeout 10 env FAKE_NVML_HANG_IN_DLOPEN=1 $(fake gb10) $S status $IDLE --gpu-timeout 300ms
exited "dlopen hangs, human output"
expect_out '^verdict: ' "dlopen hangs: the human report is complete"

# --- an answer that comes late -------------------------------------------------
run timeout 10 $(fake slow) $S status $IDLE --json
exited "slow driver"
expect_jq '.gpu_status == "ok" and .gpus[0].temperature_c == 84' "slow driver within the bound: its answer is used"
run timeout 10 $(fake slow) $S status $IDLE --json --gpu-timeout 100ms
exited "slow driver past a short bound"
expect_jq '.gpu_status == "timeout" and .gpus == []' "slow driver past the bound: timeout, nothing stale"
expect_jq '.gpu_status_detail | test("nvmlDeviceGetTemperature")' "slow driver: the slow call is named"

# --- the GPU falls off the bus ---------------------------------------------------------
run timeout 10 $(fake lost-midrun) $S status $IDLE --json
expect_jq '.gpu_status == "ok" and .gpus[0].temperature_c == 70' "lost-midrun: readings before the loss"
run timeout 10 env FAKE_NVML_TIME_SCALE=1000000 $(fake lost-midrun) $S status $IDLE --json
expect_rc 1 "lost-midrun: after the loss it is trouble"
expect_jq '.gpus[0].temperature_c == null and .gpus[0].unavailable.temperature_c == "gpu_lost" and .gpus[0].unavailable.power_w == "gpu_lost"' "lost-midrun: every reading says gpu_lost"
expect_jq '.pool.total_bytes > 0 and .psi.memory.status == "ok"' "lost-midrun: the rest is still read"

# --- nonsense ------------------------------------------------------------------------------
run timeout 10 $(fake garbage) $S status $IDLE --json
expect_jq '.warnings == 7' "garbage: 6 implausible readings and 1 unknown reason mask counted"
expect_jq '.gpus[1].power_w == null and .gpus[1].unavailable.power_w == "implausible"' "garbage: 0 mW at 99% busy is rejected"
expect_jq '.gpus[1].sm_clock_max_mhz == null and .gpus[1].sm_clock_mhz == 2000' "garbage: a 90 GHz max clock is rejected, the rest kept"
expect_jq '.gpus[1].unavailable.temperature_c == "driver_error"' "garbage: UNKNOWN from the driver is a driver error"
run timeout 10 $(fake gb10) $S status $IDLE --json
expect_jq '.warnings == 0' "sane readings: no warnings"
run timeout 10 $(fake garbage) $S status $IDLE
expect_out 'warnings: 7 implausible readings rejected' "garbage: human output shows the warnings"

# --- the option ------------------------------------------------------------------------------
run $S status --gpu-timeout soon
expect_rc 2 "--gpu-timeout garbage"
expect_err "gpu-timeout: 'soon' is not a duration" "--gpu-timeout garbage is explained"
run $S status --gpu-timeout 0
expect_rc 2 "--gpu-timeout 0"
run $S status --gpu-timeout 2h
expect_rc 2 "--gpu-timeout over an hour"

# --- a closed stdout ends cleanly -----------------------------------------------------------
( $S status $(sysroot gb10-loaded); echo $? >"$TMP/rc" ) 2>"$ERR" | head -1 >/dev/null
RC=$(cat "$TMP/rc")
expect_rc 0 "status | head -1: sparkops itself exits 0"
[ ! -s "$ERR" ]
_report $? "status | head -1: nothing on stderr"
( timeout 10 $(fake hang) $S status $IDLE --gpu-timeout 100ms; echo $? >"$TMP/rc" ) 2>"$ERR" | head -1 >/dev/null
RC=$(cat "$TMP/rc")
exited "hang | head -1"
done_testing
