#!/bin/sh
# SPDX-License-Identifier: MIT
# What a reading costs as the box grows. At each level it starts exactly that
# many extra processes (`sleep`, ended here by PID), then measures side by
# side, in the same run, against an anchor measured in that run:
#   the sampler (bench/sampler_cost, one sample a second)  vs  `vmstat 1`
#   `watch --interval 1`                                   vs  `vmstat 1`
#   `status --json` (wall, interleaved with the anchor)    vs  `free -g`
#   a fresh `serve --cache 0` scrape (CPU per scrape)      vs  node_exporter
#                                   (meminfo, pressure, thermal_zone, hwmon)
#   serve's PSS at the end of the level                    vs  node_exporter's
# and prints each figure next to its anchor and their ratio.
# Each level runs COST_SECONDS (default 75), longer than the longest period
# inside sparkops (the process view's full scan: 60 s at most; the sensor
# metadata: 60 s), so its full scans are in every figure.
# The goals (docs/RELIABILITY.md, "Cost") are judged by bench/bench_goals.sh;
# this bench shows how the figures grow with the process count, under the
# load of its own long runners.
# Usage: bench/bench_cost.sh [BUILD]  (COST_LEVELS="75 2000 5000", COST_SECONDS=75)
BUILD=${1:-build}
cd "$(dirname "$0")/.." || exit 2
. bench/lib.sh
top=$(pwd)
S="$top/$BUILD/sparkops"
LEVELS=${COST_LEVELS:-75 2000 5000}
SECS=${COST_SECONDS:-75}
[ -x "$S" ] || { echo "bench_cost: build first ($S missing)"; exit 2; }
make -s -C "$top" BUILD="$BUILD" "$BUILD/bench/sampler_cost" >/dev/null 2>&1 ||
	{ echo "bench_cost: could not build $BUILD/bench/sampler_cost"; exit 2; }
SAMPLER="$top/$BUILD/bench/sampler_cost"
command -v vmstat >/dev/null 2>&1 || scripts/deps.sh procps || exit 0
NE=""
if scripts/deps.sh prometheus-node-exporter 2>/dev/null; then
	NE=$(command -v prometheus-node-exporter || echo /usr/bin/prometheus-node-exporter)
fi
TMP=$(mktemp -d)
SLEEPS=""
BG=""
NE_PID=""
bench_cleanup_traps
${CC:-cc} -O2 -o "$TMP/rusage" tests/tools/rusage.c || exit 2
${CC:-cc} -O2 -o "$TMP/httpc" tests/tools/httpc.c || exit 2



printf '%-7s %-6s %9s %9s %9s %7s %7s %9s %9s %7s %9s %9s %7s %8s %8s %6s\n' "extra" "procs" \
	"sampler" "watch" "vmstat 1" "smp/" "watch/" "status" "free -g" "status/" "scrape" "node_exp" "ne/" \
	"serve" "node_exp" "ne/"
printf '%-7s %-6s %9s %9s %9s %7s %7s %9s %9s %7s %9s %9s %7s %8s %8s %6s\n' "" "" \
	"ms CPU" "ms CPU" "ms CPU" "vmstat" "vmstat" "ms wall" "ms wall" "free" "ms CPU" "ms CPU" "scrape" \
	"PSS MiB" "PSS MiB" "serve"
for n in $LEVELS; do
	i=0
	while [ $i -lt "$n" ]; do
		sleep 100000 &
		SLEEPS="$SLEEPS $!"
		i=$((i + 1))
	done
	procs=$(ls /proc | grep -c '^[0-9]')
	# the long runners: the sampler, watch, vmstat, serve, node_exporter
	"$SAMPLER" $((SECS - 5)) 1000 >"$TMP/sampler" 2>&1 &
	BG="$BG $!"
	"$S" watch --interval 1 --duration $((SECS + 10)) --log "$TMP/w.csv" >/dev/null 2>&1 &
	W=$!
	BG="$BG $W"
	vmstat 1 $((SECS + 10)) >/dev/null 2>&1 &
	V=$!
	BG="$BG $V"
	"$S" serve --listen 127.0.0.1:0 --cache 0 2>"$TMP/serve.err" &
	SP=$!
	BG="$BG $SP"
	j=0
	while ! grep -q serving "$TMP/serve.err" 2>/dev/null && [ $j -lt 200 ]; do sleep 0.05; j=$((j + 1)); done
	SPORT=$(sed -n 's|^.*serving http://.*:\([0-9]*\)/metrics$|\1|p' "$TMP/serve.err")
	[ -n "$NE" ] && start_node_exporter "$NE" "$TMP/ne.log"
	[ -n "$SPORT" ] && "$TMP/httpc" getk 127.0.0.1 "$SPORT" /metrics 5 >/dev/null
	[ -n "$NE_PID" ] && "$TMP/httpc" getk 127.0.0.1 "$NE_PORT" /metrics 5 >/dev/null
	sleep 3 # past the start-ups (dlopen, the first full scan)
	w0=$(cpu_ns $W); v0=$(cpu_ns $V); t0=$(now_s)
	s0=$(cpu_ns $SP); ne0=0; [ -n "$NE_PID" ] && ne0=$(cpu_ns $NE_PID)
	: >"$TMP/st"; : >"$TMP/fr"
	scrapes=0
	end=$(awk -v t="$t0" -v d="$SECS" 'BEGIN { printf "%.0f", t + d - 8 }')
	while [ "$(date +%s)" -lt "$end" ]; do
		[ -n "$SPORT" ] && "$TMP/httpc" getk 127.0.0.1 "$SPORT" /metrics 5 >/dev/null
		[ -n "$NE_PID" ] && "$TMP/httpc" getk 127.0.0.1 "$NE_PORT" /metrics 5 >/dev/null
		scrapes=$((scrapes + 5))
		"$TMP/rusage" 1 "$S" status --json >>"$TMP/st"
		"$TMP/rusage" 1 free -g >>"$TMP/fr"
		sleep 0.5
	done
	w1=$(cpu_ns $W); v1=$(cpu_ns $V); t1=$(now_s)
	s1=$(cpu_ns $SP); ne1=0; [ -n "$NE_PID" ] && ne1=$(cpu_ns $NE_PID)
	spss=$(pss_kib $SP); npss=0; [ -n "$NE_PID" ] && npss=$(pss_kib $NE_PID)
	wait $(echo $BG | awk '{print $1}') 2>/dev/null # the sampler ends on its own
	stop_bg
	smp=$(sed -n 's/.*cpu_ms_per_sample=\([0-9.]*\).*/\1/p' "$TMP/sampler")
	stw=$(sed -n 's/.*wall_ms_p50=\([0-9.]*\).*/\1/p' "$TMP/st" | med)
	frw=$(sed -n 's/.*wall_ms_p50=\([0-9.]*\).*/\1/p' "$TMP/fr" | med)
	awk -v n="$n" -v procs="$procs" -v smp="${smp:-0}" -v w=$((w1 - w0)) -v v=$((v1 - v0)) -v t0="$t0" -v t1="$t1" \
		-v stw="$stw" -v frw="$frw" -v s=$((s1 - s0)) -v ne=$((ne1 - ne0)) -v k="$scrapes" \
		-v spss="${spss:-0}" -v npss="${npss:-0}" 'BEGIN {
		secs = t1 - t0; wm = w / 1e6 / secs; vm = v / 1e6 / secs
		sc = k ? s / 1e6 / k : 0; nc = k ? ne / 1e6 / k : 0
		printf "+%-6d %-6d %9.3f %9.3f %9.3f %6.2fx %6.2fx %9.2f %9.2f %6.2fx %9.3f %9.3f %6.1fx %8.1f %8.1f %5.1fx\n",
			n, procs, smp, wm, vm, (vm > 0 ? smp / vm : 0), (vm > 0 ? wm / vm : 0),
			stw, frw, (frw > 0 ? stw / frw : 0), sc, nc, (sc > 0 ? nc / sc : 0),
			spss / 1024, npss / 1024, (spss > 0 ? npss / spss : 0)
	}' | tee -a "$TMP/rows"
	stop_sleeps
done
echo "(sampler and watch: CPU per 1 s sample over ${SECS} s, the first 3 s of start-up left out, and as a"
echo " multiple of vmstat 1's over the same seconds (smp/vmstat, watch/vmstat: below 1, sparkops costs less);"
echo " status and free -g: median wall of interleaved runs; scrape: CPU per fresh scrape (serve --cache 0,"
echo " every source with the process view) and per node_exporter scrape over the same seconds (ne/scrape above"
echo " 1: sparkops costs less); PSS at the end of the level (ne/serve above 1: sparkops uses less). Every"
echo " anchor is measured in this run, on this box, at the same time: on a loaded box both sides pay for it.)"
echo "(the goals are judged by bench_goals.sh, from outside and on an otherwise quiet run: here the"
echo " sampler, watch, vmstat, serve and node_exporter run while status and free -g are timed, and on a"
echo " loaded box a short command's wall is mostly its wait for a CPU: free -g's grows more, in proportion,"
echo " than status's (free -g at +2,000 took 21.9 ms here against 1.4 ms alone), so the ratio reads low)"
