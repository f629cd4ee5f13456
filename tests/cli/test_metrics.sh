#!/bin/sh
# SPDX-License-Identifier: MIT
# sparkops metrics: the exposition passes `promtool check metrics` on every
# fixture and fake-NVML scenario, unknown readings are left out, and the
# textfile mode writes atomically and stops cleanly on SIGTERM.
. "$(dirname "$0")/lib.sh"
SC="$(cd "$(dirname "$0")/../fake-nvml/scenarios" && pwd)"
S=$SPARKOPS

command -v promtool >/dev/null 2>&1
_report $? "promtool is installed (Debian package prometheus)"

# --- every fixture x every NVML scenario lints clean ------------------------------
# At a twentieth of the time: a 0.1 s GPU deadline (the default's 2 s / 20)
# and the fake's late answers 20 times sooner (FAKE_NVML_SLEEP_SCALE), so
# every scenario ends as at full scale (answered, or a timeout) without
# waiting out 2 s deadlines 30 times. The late answers (slow, slow-1s: 15
# and 50 ms scaled) keep the default 2 s deadline: they never wait it out,
# and a loaded machine cannot push them past it. The fixture sysroots (a
# folder with proc/), and one folder that is none (every file missing).
# promtool (a Go program, ~70 ms a start) checks every exposition of the
# matrix in one pass: each one's names get a prefix of its own
# (sparkops_ -> sparkops_mK_, the suffixes the lint reads unchanged), so the
# families of one never meet another's; when that pass fails, each case is
# checked alone to say which.
mkdir "$TMP/not-a-sysroot" "$TMP/prom"
K=20
k=0
: >"$TMP/prom/cases"
for f in "$FIX"/*/ "$TMP/not-a-sysroot/"; do
	[ -d "$f/proc" ] || [ "$f" = "$TMP/not-a-sysroot/" ] || continue
	fx=$(basename "$f")
	for sc in "$SC"/*.scn; do
		n=$(basename "$sc" .scn)
		dl=0.1
		case $n in slow | slow-1s) dl=2 ;; esac
		k=$((k + 1))
		out=$OUT
		OUT=$TMP/prom/$k.prom
		run env SPARKOPS_NVML_LIB="$FAKE_NVML" FAKE_NVML_SCENARIO="$sc" FAKE_NVML_SLEEP_SCALE=$K \
			$S metrics --gpu-timeout $dl --procfs "$f/proc" --sysfs "$f/sys"
		echo "$k $RC $fx / $n" >>"$TMP/prom/cases"
		case $n in
		hang | hang-init) expect_out 'status="timeout"' "$fx / $n: the GPU said timed out at the short deadline" ;;
		slow | slow-1s) expect_out '^sparkops_gpu_temp_celsius\{.*\} 84$' "$fx / $n: a late answer within the deadline is used (as at 2 s)" ;;
		esac
		OUT=$out
	done
done
(cd "$TMP/prom" && awk 'FNR == 1 { k = FILENAME; sub(/\.prom$/, "", k) }
	{ sub(/^sparkops_/, "sparkops_m" k "_"); sub(/^# HELP sparkops_/, "# HELP sparkops_m" k "_")
	  sub(/^# TYPE sparkops_/, "# TYPE sparkops_m" k "_"); print }' $(awk '{ printf "%s.prom ", $1 }' cases)) >"$TMP/all.prom"
promtool check metrics <"$TMP/all.prom" >"$ERR" 2>&1
all=$?
while read -r k rc name; do
	if [ "$all" = 0 ]; then
		[ "$rc" = 0 ]
	else
		[ "$rc" = 0 ] && promtool check metrics <"$TMP/prom/$k.prom" >"$ERR" 2>&1
	fi
	_report $? "promtool check metrics: $name"
done <"$TMP/prom/cases"
run env SPARKOPS_NVML_LIB=/nonexistent/libnvidia-ml.so.1 $S metrics $(sysroot no-gpu)
[ "$RC" = 0 ] && promtool check metrics <"$OUT" >"$ERR" 2>&1
_report $? "promtool check metrics: no NVML library at all"
expect_out '^sparkops_source_ok\{source="nvml",status="no_driver"\} 0$' "no driver: said, not zeroed"
expect_no_out '^sparkops_gpu_' "no driver: no GPU series"
run env SPARKOPS_NVML_LIB=$FAKE_NVML_OLD FAKE_NVML_SCENARIO=$SC/gb10.scn $S metrics $(sysroot gb10-idle)
[ "$RC" = 0 ] && promtool check metrics <"$OUT" >"$ERR" 2>&1
_report $? "promtool check metrics: an old driver without the newer symbols"

# --- GB10 under load: the values ---------------------------------------------------
G="env SPARKOPS_NVML_LIB=$FAKE_NVML FAKE_NVML_SCENARIO=$SC/gb10.scn"
run $G $S metrics $(sysroot gb10-loaded)
expect_rc 0 "gb10 loaded"
expect_out '^sparkops_up 1$' "sparkops_up"
expect_out '^sparkops_build_info\{version="[0-9]+\.[0-9]+\.[0-9]+"\} 1$' "build info"
expect_out '^sparkops_pool_total_bytes 128526896128$' "pool total in bytes"
expect_out '^sparkops_pool_page_cache_bytes [0-9]+$' "page cache"
expect_out '^sparkops_pool_reclaimable_bytes [0-9]+$' "reclaimable"
expect_out '^sparkops_budget_now_bytes 2362231808$' "budget now = MemFree - reserve"
expect_out '^sparkops_budget_after_flush_bytes [0-9]+$' "budget after flush"
expect_out '^sparkops_gpu_clocks_event_reason_active\{gpu="0",name="NVIDIA GB10",reason="sw_thermal_slowdown"\} 1$' "thermal slowdown as a label"
expect_out '^sparkops_gpu_clocks_event_reason_active\{gpu="0",name="NVIDIA GB10",reason="hw_power_brake_slowdown"\} 0$' "inactive reasons are 0"
[ "$(grep -c '^sparkops_gpu_clocks_event_reason_active' "$OUT")" = 9 ]
_report $? "every known reason exported"
expect_out '^sparkops_gpu_violation_seconds_total\{gpu="0",name="NVIDIA GB10",policy="thermal"\} 725$' "violation time as a counter in seconds"
expect_out '^sparkops_gpu_temp_celsius\{gpu="0",name="NVIDIA GB10"\} 84$' "GPU temperature"
expect_out '^sparkops_gpu_power_watts\{gpu="0",name="NVIDIA GB10"\} 98.6$' "GPU power in watts"
expect_out '^sparkops_gpu_sm_clock_hertz\{gpu="0",name="NVIDIA GB10"\} 2405000000$' "SM clock in hertz"
expect_no_out '^sparkops_gpu_memory_(total|free|used)_bytes' "GB10: NVML memory not supported, no memory series"
expect_no_out '^sparkops_gpu_power_limit_watts' "GB10: power limit N/A, left out"
expect_out '^sparkops_gpu_reading_ok\{gpu="0",name="NVIDIA GB10",field="memory",status="not_supported"\} 0$' "unknown memory is visible"
expect_out '^sparkops_psi_avg_ratio\{resource="memory",kind="some",window="10s"\} 0.042$' "PSI average as a ratio"
expect_out '^# TYPE sparkops_psi_stalled_seconds_total counter$' "PSI totals are counters"
expect_out '^sparkops_psi_stalled_seconds_total\{resource="memory",kind="full"\} 0.061728$' "PSI total in seconds"
expect_out '^sparkops_thermal_zone_temp_celsius\{zone="3",type="acpitz"\} 85.5$' "thermal zone"
expect_out '^sparkops_hwmon_power_watts\{hwmon="hwmon1",chip="spbm",sensor="power11",label="pl1"\} 139.6$' "hwmon power"
expect_out '^sparkops_spark_pl1_cap_watts 140$' "PL1 cap"
expect_out '^sparkops_spark_at_pl1_cap 1$' "PL1 at its cap"
expect_out '^sparkops_process_resident_bytes\{pid="2101",name="vllm",kind="inference_server"\} [0-9]+$' "vLLM's memory"
expect_out '^sparkops_process_memory_cap_ratio\{pid="2101",name="vllm",kind="inference_server",source="--gpu-memory-utilization"\} 0.5$' "vLLM's cap"
expect_out '^sparkops_processes\{kind="trainer"\} 2$' "trainers counted"
run env FAKE_NVML_PROCS=3301:30000000000 $G $S metrics $(sysroot gb10-loaded)
expect_out '^sparkops_process_gpu_memory_bytes\{pid="3301",name="train.py",kind="trainer"\} 30000000000$' "per-process GPU memory"

run env SPARKOPS_NVML_LIB=$FAKE_NVML FAKE_NVML_SCENARIO=$SC/discrete.scn $S metrics $(sysroot discrete)
expect_out '^sparkops_gpu_memory_total_bytes\{gpu="0",name="NVIDIA H100 80GB HBM3"\} 85520809984$' "discrete GPU: NVML memory exported"
expect_out '^sparkops_pool_unified 0$' "discrete GPU: not unified"
run env SPARKOPS_NVML_LIB=$FAKE_NVML FAKE_NVML_SCENARIO=$SC/lost.scn $S metrics $(sysroot gb10-idle)
expect_rc 0 "a lost GPU still gives an exposition"
run env SPARKOPS_NVML_LIB=$FAKE_NVML FAKE_NVML_SCENARIO=$SC/gb10.scn $S metrics $(sysroot gb10-usbpd)
expect_out '^sparkops_spark_usb_pd_safety_mode 1$' "USB-PD safety mode"
run env SPARKOPS_NVML_LIB=$FAKE_NVML FAKE_NVML_SCENARIO=$SC/gb10.scn $S metrics $(sysroot container-v2)
expect_out '^sparkops_cgroup_memory_limit_bytes\{cgroup="[^"]*",version="2"\} [0-9]+$' "cgroup v2 limit"
expect_out '^sparkops_cgroup_oom_kills_total\{' "cgroup OOM kills as a counter"
run env SPARKOPS_NVML_LIB=/nonexistent $S metrics $(sysroot missing)
expect_rc 0 "no meminfo: still an exposition"
expect_out '^sparkops_source_ok\{source="meminfo",status="missing"\} 0$' "no meminfo: said"
expect_no_out '^sparkops_pool_total_bytes' "no meminfo: no pool series"
run env SPARKOPS_NVML_LIB=/nonexistent $S metrics --reserve 1GiB $(sysroot gb10-loaded)
expect_out '^sparkops_budget_reserve_bytes 1073741824$' "--reserve"

run $G $S metrics $(sysroot gb10-loaded) --no-processes
expect_rc 0 "--no-processes"
expect_no_out '^sparkops_process' "--no-processes: no process series"
expect_no_out 'source="processes"' "--no-processes: the skipped source is not called missing"
promtool check metrics <"$OUT" >"$ERR" 2>&1
_report $? "promtool check metrics: --no-processes"
run $G $S metrics $(sysroot gb10-loaded)
expect_out '^sparkops_source_ok\{source="processes",status="ok"\} 1$' "the process scan is a source"

# --- usage ---------------------------------------------------------------------------
run $S metrics --interval 5s
expect_rc 2 "--interval without --textfile"
run $S metrics --textfile "$TMP" --interval soon
expect_rc 2 "bad --interval"
expect_err "--interval: 'soon'" "bad --interval is named"
run $S metrics --bogus
expect_rc 2 "unknown option"
expect_err "^sparkops: unknown option '--bogus'$" "the unknown option is named"
[ "$(grep -c . "$ERR")" = 2 ]
_report $? "one error line and one hint (getopt's own complaint is off)"
run $S metrics --textfile
expect_rc 2 "--textfile without its value"
expect_err "^sparkops: option '--textfile' needs a value$" "the option missing its value is named"
run $S metrics --no-processes=1
expect_err "^sparkops: option '--no-processes' takes no value$" "a value for a flag that takes none is said as such"
run $S metrics --bogus=1
expect_err "^sparkops: unknown option '--bogus'$" "an unknown option is named without its value"
run $S metrics --reserve lots
expect_rc 2 "bad --reserve"
expect_err "--reserve: 'lots' is not a size" "bad --reserve is named"
run $S metrics extra
expect_rc 2 "unexpected argument"

# --- textfile ---------------------------------------------------------------------------
D="$TMP/textfile"
mkdir -p "$D"
run $G $S metrics $(sysroot gb10-loaded) --textfile "$D"
expect_rc 0 "--textfile"
[ -s "$D/sparkops.prom" ] && [ ! -s "$OUT" ] && promtool check metrics <"$D/sparkops.prom" >/dev/null 2>&1
_report $? "--textfile writes DIR/sparkops.prom (and nothing to stdout)"
[ "$(ls "$D")" = "sparkops.prom" ]
_report $? "--textfile leaves no temporary file"
# node_exporter's textfile collector takes the file as it is (when node_exporter is here)
NE=$(command -v prometheus-node-exporter || command -v node_exporter)
if [ -n "$NE" ]; then
	up=""
	for try in 1 2 3 4 5; do
		port=$((20000 + ($$ * 13 + try * 7919 + $(date +%N | sed 's/^0*//;s/^$/0/')) % 40000))
		"$NE" --web.listen-address=127.0.0.1:$port --collector.disable-defaults --collector.textfile \
			--collector.textfile.directory="$D" >"$TMP/ne.log" 2>&1 &
		nepid=$!
		i=0
		while [ $i -lt 50 ] && kill -0 $nepid 2>/dev/null; do
			curl -s -o "$OUT" "http://127.0.0.1:$port/metrics" && { up=1; break; }
			sleep 0.1
			i=$((i + 1))
		done
		[ -n "$up" ] && break
		kill $nepid 2>/dev/null
		wait $nepid 2>/dev/null
	done
	expect_out '^sparkops_pool_total_bytes 1\.28526896128e\+11$|^sparkops_pool_total_bytes 128526896128$' "node_exporter's textfile collector serves sparkops.prom"
	expect_out '^node_textfile_scrape_error 0$' "... without a textfile error"
	kill $nepid 2>/dev/null
	wait $nepid 2>/dev/null
else
	_report 0 "prometheus-node-exporter not installed: textfile collector check # skip"
fi
run $S metrics --textfile "$TMP/nonexistent/dir"
expect_rc 5 "--textfile into a missing folder"
expect_err "nonexistent/dir/sparkops.prom': cannot write" "the file is named"

# --interval: repeated writes until SIGTERM, then exit 0
rm -f "$D/sparkops.prom"
$G $S metrics $(sysroot gb10-loaded) --textfile "$D" --interval 0.2s >"$OUT" 2>"$ERR" &
pid=$!
i=0
while [ ! -s "$D/sparkops.prom" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
first=$(stat -c %Y.%N "$D/sparkops.prom" 2>/dev/null)
ino1=$(stat -c %i "$D/sparkops.prom" 2>/dev/null)
i=0
while [ "$(stat -c %i "$D/sparkops.prom" 2>/dev/null)" = "$ino1" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
[ "$(stat -c %i "$D/sparkops.prom" 2>/dev/null)" != "$ino1" ]
_report $? "--interval writes again (a new file renamed into place)"
kill -TERM $pid
wait $pid
RC=$?
expect_rc 0 "SIGTERM ends --interval cleanly"
: "$first"
rm -f "$D/sparkops.prom"
$G $S metrics $(sysroot gb10-loaded) --textfile "$D" --interval 1h >"$OUT" 2>"$ERR" &
pid=$!
i=0
while [ ! -s "$D/sparkops.prom" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
kill -INT $pid
wait $pid
RC=$?
expect_rc 0 "SIGINT ends a long --interval wait at once"
done_testing
