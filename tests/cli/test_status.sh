#!/bin/sh
# SPDX-License-Identifier: MIT
# sparkops status against fixture trees and fake NVML scenarios.
. "$(dirname "$0")/lib.sh"
SC="$(dirname "$0")/../fake-nvml/scenarios"
S=$SPARKOPS

# --- foundation -------------------------------------------------------------
run $S --version
expect_rc 0 "--version"
expect_out '^sparkops [0-9]+\.[0-9]+\.[0-9]+$' "--version prints the version"
run $S --help
expect_rc 0 "--help"
expect_out 'status' "--help lists the commands"
run $S status --help
expect_rc 0 "status --help"
expect_out -- '--reserve SIZE' "status --help lists its options"
run $S
expect_rc 2 "no command is a usage error"
run $S frobnicate
expect_rc 2 "unknown command"
expect_err "'frobnicate' is not a sparkops command" "unknown command is named"
run $S status --bogus
expect_rc 2 "unknown option"
expect_err "unknown option '--bogus'" "the unknown option is named, once"
[ "$(wc -l <"$ERR")" -le 2 ]
_report $? "one error line (and the help pointer)"
run $S status --reserve
expect_rc 2 "--reserve without a value"
expect_err "option '--reserve' needs a value" "a missing value is named"
run $S status $(sysroot gb10-loaded) --no-processes --json
expect_jq '.processes == null' "--no-processes: processes unknown (null), not none"
run $S status $(sysroot gb10-loaded) --no-processes
expect_out 'PROCESSES competing for the pool: not scanned' "--no-processes says it did not look"
run $S status --reserve lots
expect_rc 2 "bad --reserve"
expect_err "--reserve: 'lots' is not a size" "bad --reserve is explained"

# --- no driver on this machine -------------------------------------------------
run env SPARKOPS_NVML_LIB=/nonexistent/libnvidia-ml.so.1 $S status $(sysroot no-gpu) --json
expect_rc 0 "no driver, no GPU: status works"
expect_jq '.gpu_status == "no_driver"' "gpu_status no_driver"
expect_jq '.gpus == []' "no GPUs listed"
expect_jq '.pool.total_bytes == 16642998272' "pool total from meminfo"
run env SPARKOPS_NVML_LIB=/nonexistent/libnvidia-ml.so.1 $S status $(sysroot no-gpu)
expect_out 'GPU  no NVIDIA driver' "human output says there is no NVIDIA driver"
run env SPARKOPS_NVML_LIB=$FAKE_NVML FAKE_NVML_SCENARIO=$SC/nodriver.scn $S status $(sysroot no-gpu) --json
expect_jq '.gpu_status == "no_driver"' "nvmlInit DRIVER_NOT_LOADED is no_driver"
run env SPARKOPS_NVML_LIB=$FAKE_NVML FAKE_NVML_SCENARIO=$SC/nogpu.scn $S status $(sysroot no-gpu) --json
expect_jq '.gpu_status == "no_gpu"' "a driver with no GPU"

# --- GB10 under load ---------------------------------------------------------------
G="env SPARKOPS_NVML_LIB=$FAKE_NVML FAKE_NVML_SCENARIO=$SC/gb10.scn"
run $G $S status $(sysroot gb10-loaded) --json
expect_rc 0 "gb10 loaded"
expect_jq '.pool.total_bytes > 128000000000 and .pool.total_bytes < 129000000000' "GB10 pool ~119.7 GiB"
expect_jq '.pool.unified == true' "GB10 is unified memory"
expect_jq '.pool.page_cache_bytes > 40*1073741824' "tens of GiB of page cache"
expect_jq '.budget.reserve_bytes == 4294967296' "default reserve 4 GiB"
expect_jq '.budget.now_bytes == (.pool.free_bytes - .budget.reserve_bytes)' "budget now = MemFree - reserve"
expect_jq '.budget.after_flush_bytes > .budget.now_bytes + 40*1073741824' "a flush gives back the cache"
expect_jq '.gpus[0].name == "NVIDIA GB10"' "GPU name"
expect_jq '.gpus[0].temperature_c == 84' "temperature"
expect_jq '.gpus[0].power_w == 98.6' "power in watts"
expect_jq '.gpus[0].power_limit_w == null and .gpus[0].unavailable.power_limit_w == "not_supported"' "power limit N/A, with the reason"
expect_jq '.gpus[0].sm_clock_mhz == 2405 and .gpus[0].sm_clock_max_mhz == 3003' "SM clock and max"
expect_jq '.gpus[0].clocks_event_reasons == ["sw_power_cap","sw_thermal_slowdown"]' "event reasons as names"
expect_jq '.gpus[0].memory.status == "not_supported" and .gpus[0].memory.total_bytes == null' "NVML memory not supported, null not 0"
expect_jq '.gpus[0].power_violation_seconds == 3720 and .gpus[0].thermal_violation_seconds == 725' "violation times"
expect_jq '.gpu_status == "ok"' "gpu_status ok"
expect_jq '.claims.nvml_memory[0].nvidia_smi_memory_used == "[N/A]"' "what nvidia-smi would claim"
expect_jq '.claims.cuda_free_estimate_bytes == .pool.free_bytes' "what cudaMemGetInfo would claim"
expect_jq '.spark.at_pl1_cap == true and .spark.pl1_cap_w == 140 and .spark.usb_pd_safety_mode == false' "PL1 at its 140 W cap"
expect_jq '.spark.system_power_w == 182.4' "system power from spbm sys_total"
expect_jq '.spark.die_temp_c == 85.5' "die temperature from acpitz"
expect_jq '[.processes[] | select(.name=="vllm")][0] | .kind == "inference_server" and .cap_fraction == 0.5 and .cap_source == "--gpu-memory-utilization"' "vLLM and its cap from the command line"
expect_jq '[.processes[] | select(.name=="ollama")][0].kind == "inference_server"' "ollama recognised"
expect_jq '[.processes[] | select(.name=="torchrun")][0].kind == "trainer"' "torchrun recognised"
expect_jq '[.processes[] | select(.pid==3301)][0] | .kind == "trainer" and .rss_bytes > 38*1073741824' "the training script with its RSS"
expect_jq '[.processes[] | select(.pid==812)] == []' "small unrelated processes are not listed"
expect_jq '.psi.memory.some.avg10_pct == 4.2 and .psi.memory.full.total_us == 61728' "PSI memory"
run env FAKE_NVML_PROCS=3301:30000000000 $G $S status $(sysroot gb10-loaded) --json
expect_jq '[.processes[] | select(.pid==3301)][0].gpu_memory_bytes == 30000000000' "per-process GPU memory from NVML"
run $G $S status $(sysroot gb10-loaded)
expect_rc 0 "gb10 human output"
expect_out 'nvidia-smi memory +Not Supported' "human: nvidia-smi memory not supported, side by side"
expect_out 'cudaMemGetInfo free' "human: what CUDA would call free"
expect_out 'clocks event reasons: sw_power_cap, sw_thermal_slowdown' "human: event reasons"
expect_out 'PL1 average +139.6 W +of a 140 W cap' "human: PL1 against its cap"
expect_out '^verdict: 2.2 GiB for a new job now, 46.8 GiB after a cache flush' "human: one-line verdict"
run $G $S status $(sysroot gb10-loaded) --reserve 1GiB --json
expect_jq '.budget.reserve_bytes == 1073741824 and .budget.now_bytes == .pool.free_bytes - 1073741824' "--reserve changes the budget"

# the old driver: deprecated symbols only
run env SPARKOPS_NVML_LIB=$FAKE_NVML_OLD FAKE_NVML_SCENARIO=$SC/gb10.scn FAKE_NVML_CALL_LOG=$TMP/calls $S status $(sysroot gb10-idle) --json
expect_jq '.gpus[0].clocks_event_reasons == ["sw_power_cap","sw_thermal_slowdown"] and .gpus[0].temperature_c == 84' "old driver: same readings through the deprecated calls"
grep -q nvmlDeviceGetCurrentClocksThrottleReasons $TMP/calls
_report $? "old driver: ThrottleReasons used when EventReasons is missing"
rm -f $TMP/calls
run env SPARKOPS_NVML_LIB=$FAKE_NVML FAKE_NVML_SCENARIO=$SC/gb10.scn FAKE_NVML_CALL_LOG=$TMP/calls $S status $(sysroot gb10-idle) --json
grep -q nvmlDeviceGetCurrentClocksEventReasons $TMP/calls && ! grep -q ThrottleReasons $TMP/calls && grep -q nvmlDeviceGetMemoryInfo_v2 $TMP/calls
_report $? "new driver: EventReasons and MemoryInfo_v2 used first"

# --- discrete GPU ----------------------------------------------------------------------
run env SPARKOPS_NVML_LIB=$FAKE_NVML FAKE_NVML_SCENARIO=$SC/discrete.scn $S status $(sysroot discrete) --json
expect_jq '.pool.unified == false and .gpus[0].integrated == false' "discrete GPU is not unified"
expect_jq '.gpus[0].memory.status == "ok" and .gpus[0].memory.total_bytes == 85520809984' "discrete: NVML memory reported"
expect_jq '.claims.cuda_free_estimate_bytes == null' "discrete: no UMA CUDA estimate"
expect_jq '.gpus[0].clocks_event_reasons == []' "discrete: no reasons active"
expect_jq '[.processes[] | select(.name=="sglang")][0].cap_fraction == 0.8' "SGLang cap from --mem-fraction-static"
expect_jq '[.processes[] | select(.pid==5100)][0] | .kind == "other" and .cmdline == "/usr/bin/java -Xmx16g -jar spark-etl.jar"' "a big unrecognised process is listed with its command line"
expect_jq '[.processes[] | select(.pid==5200)] == []' "a small unrecognised process is not"
run env SPARKOPS_NVML_LIB=$FAKE_NVML FAKE_NVML_SCENARIO=$SC/discrete.scn $S status $(sysroot discrete) --min-rss 20G --json
expect_jq '[.processes[] | select(.pid==5100)] == []' "--min-rss raises the bar"

# --- driver refusals and failures ------------------------------------------------------
run env SPARKOPS_NVML_LIB=$FAKE_NVML FAKE_NVML_SCENARIO=$SC/noperm.scn $S status $(sysroot gb10-idle) --json
expect_jq '.gpus[0].power_w == null and .gpus[0].unavailable.power_w == "no_permission"' "NO_PERMISSION is said, not 0"
expect_jq '.gpus[0].clocks_event_reasons == null and .gpus[0].unavailable.clocks_event_reasons == "no_permission"' "reasons refused"
expect_jq '.gpus[0].temperature_c == 60' "what is permitted is still read"
run env SPARKOPS_NVML_LIB=$FAKE_NVML FAKE_NVML_SCENARIO=$SC/lost.scn $S status $(sysroot gb10-idle) --json
expect_rc 1 "a lost GPU is trouble"
expect_jq '.gpus[0].temperature_c == null and .gpus[0].unavailable.temperature_c == "gpu_lost"' "GPU_IS_LOST reported"
expect_jq '.pool.total_bytes > 0 and .budget.now_bytes > 0' "the pool is still read with a lost GPU"
run env SPARKOPS_NVML_LIB=$FAKE_NVML FAKE_NVML_SCENARIO=$SC/garbage.scn $S status $(sysroot gb10-idle) --json
expect_jq '.gpus[0].temperature_c == null and .gpus[0].unavailable.temperature_c == "implausible"' "4000 C rejected"
expect_jq '.gpus[0].power_w == null and .gpus[0].sm_clock_mhz == null and .gpus[0].utilization_pct == null' "garbage power, clock, util rejected"
expect_jq '.gpus[0].clocks_event_reasons | index("unknown_bit_28") != null' "unknown reason bits are named, not dropped"
run env SPARKOPS_NVML_LIB=$BUILD_DIR/libsparkops.a $S status $(sysroot no-gpu) --json
expect_rc 0 "a library that is not NVML"
expect_jq '.gpu_status == "no_driver"' "not an NVML library: no driver"

# --- containers -----------------------------------------------------------------------------
run $S status $(sysroot container-v2) --json
expect_jq '.cgroup.version == 2 and .cgroup.limit_bytes == 17179869184 and .cgroup.oom_kill == 2' "cgroup v2 limit and oom_kill"
expect_jq '.budget.cgroup_bound == true and .budget.now_bytes == 6442450944' "v2: the budget follows the cgroup"
expect_jq '.budget.after_flush_bytes == 8589934592' "v2: a flush returns the cgroup's file pages"
run $S status $(sysroot container-v1) --json
expect_jq '.cgroup.version == 1 and .cgroup.limit_bytes == 25769803776 and .cgroup.oom_kill == 1 and .cgroup.failcnt == 57' "cgroup v1 limit, oom_kill, failcnt"
expect_jq '.budget.cgroup_bound == true and .budget.now_bytes == 4294967296' "v1: the budget follows the cgroup"
run $S status $(sysroot gb10-idle) --json
expect_jq '.cgroup.limit_bytes == null and .budget.cgroup_bound == false' "no cgroup limit"

# --- broken and missing inputs ---------------------------------------------------------------
run $S status $(sysroot broken) --json
expect_rc 0 "broken inputs do not crash"
expect_jq '.pool.free_bytes == 8192000000 and .pool.available_bytes == null' "garbage meminfo values are unknown, not 0"
expect_jq '.pool.page_cache_bytes == null and .budget.after_flush_bytes == null' "unknown page cache gives an unknown after-flush budget"
expect_jq '.psi.memory.status == "malformed" and .psi.cpu.status == "malformed" and .psi.io.status == "missing"' "broken PSI files"
expect_jq '[.thermal_zones[].reason] == ["malformed","implausible","missing"]' "broken thermal zones each say why"
expect_jq '.hwmon[0].power_w == null' "empty hwmon value is unknown"
run $S status $(sysroot missing) --json
expect_rc 2 "no /proc/meminfo: exit 2"
expect_err "cannot read the memory pool" "missing meminfo is explained"
expect_jq '.pool.total_bytes == null and .budget.now_bytes == null' "missing meminfo: nulls"
run $S status --procfs /nonexistent
expect_rc 2 "a procfs root that does not exist"

# --- GB10 specials ------------------------------------------------------------------------------
run $S status $(sysroot gb10-usbpd)
expect_rc 1 "USB-PD safety mode is trouble"
expect_out 'USB-PD safety mode' "PL1 capped at 20 W is said loudly"
run $S status $(sysroot gb10-idle)
expect_out 'spbm sys_total' "system power shown when present"
expect_no_out 'TROUBLE' "idle GB10 is not trouble"

# environment roots
run env SPARKOPS_PROCFS=$FIX/container-v2/proc SPARKOPS_SYSFS=$FIX/container-v2/sys $S status --json
expect_jq '.cgroup.version == 2 and .cgroup.limit_bytes == 17179869184' "SPARKOPS_PROCFS/SPARKOPS_SYSFS"
run env SPARKOPS_PROCFS=/nonexistent $S --procfs $FIX/no-gpu/proc status --json
expect_jq '.pool.total_bytes == 16642998272' "--procfs wins over SPARKOPS_PROCFS"

# closed stdout: no crash, no error
$S status $(sysroot gb10-loaded) | head -1 >/dev/null
RC=$?
expect_rc 0 "status | head -1"

done_testing
