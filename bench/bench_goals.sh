#!/bin/sh
# SPDX-License-Identifier: MIT
# Every row of the cost goals (docs/RELIABILITY.md, "Cost"), measured from
# outside, the way a user's `time` and a Prometheus server see sparkops:
#   status --json wall / free -g wall      a new process's whole cost (fork, exec,
#                                          exit), timed by its parent (tests/tools/
#                                          rusage.c), medians of ROUNDS×RUNS runs of
#                                          each, the two interleaved one by one
#   node_exporter CPU / serve CPU a scrape serve --cache 0 (fresh readings, the
#                                          process view too) against prometheus-
#                                          node-exporter with the same collectors
#                                          (meminfo, pressure, thermal_zone, hwmon),
#                                          each server's own schedstat (every
#                                          thread) over SCRAPES kept-alive scrapes
#                                          in alternating rounds of 100
#   node_exporter PSS / serve PSS          /proc/PID/smaps_rollup after the scrapes,
#                                          one sparkops serve alone (two would share
#                                          their libraries' pages and halve each PSS)
#   watch --interval 1 CPU a sample        schedstat over WATCH_S samples, next to
#                                          `vmstat 1`'s over the same seconds
# idle, and again with EXTRA (2000) more processes (`sleep 600`, started
# here, ended here by PID). The fake NVML library (build/libfake-nvml.so, the
# GB10 scenario) is loaded, so the GPU's thread and reads are in every
# figure. Each row prints the figure, its anchor, the ratio and the goal.
# On a shared machine the absolute times move with the load; the ratios,
# both sides measured in the same seconds, much less.
# Usage: bench/bench_goals.sh [BUILD]  (RUNS=15 ROUNDS=3 SCRAPES=300 WATCH_S=30 EXTRA=2000)
BUILD=${1:-build}
cd "$(dirname "$0")/.." || exit 2
. bench/lib.sh
top=$(pwd)
S="$top/$BUILD/sparkops"
RUNS=${RUNS:-15}
ROUNDS=${ROUNDS:-3}
SCRAPES=${SCRAPES:-300}
WATCH_S=${WATCH_S:-30}
EXTRA=${EXTRA:-2000}
[ -x "$S" ] || { echo "bench_goals: build first ($S missing)"; exit 2; }
FAKE="$top/$BUILD/libfake-nvml.so"
[ -f "$FAKE" ] || make -s -C "$top" BUILD="$BUILD" "$FAKE" >/dev/null 2>&1 ||
	{ echo "bench_goals: could not build $FAKE"; exit 2; }
command -v free >/dev/null 2>&1 && command -v vmstat >/dev/null 2>&1 || scripts/deps.sh procps || exit 2
scripts/deps.sh prometheus-node-exporter >/dev/null 2>&1 || { echo "bench_goals: prometheus-node-exporter missing"; exit 2; }
NE=$(command -v prometheus-node-exporter || echo /usr/bin/prometheus-node-exporter)
export SPARKOPS_NVML_LIB="$FAKE" FAKE_NVML_SCENARIO="$top/tests/fake-nvml/scenarios/gb10.scn"
TMP=$(mktemp -d)
SLEEPS=""
BG=""
NE_PID=""
bench_cleanup_traps
${CC:-cc} -O2 -o "$TMP/rusage" tests/tools/rusage.c || exit 2
${CC:-cc} -O2 -o "$TMP/httpc" tests/tools/httpc.c || exit 2

procs() { ls /proc | grep -c '^[0-9]'; }

# walls LABEL: RUNS×ROUNDS runs of status --json and of free -g, one after
# the other; the medians into $TMP/LABEL.st and $TMP/LABEL.fr
walls() {
	: >"$TMP/$1.stw"
	: >"$TMP/$1.frw"
	"$TMP/rusage" 3 "$S" status --json >/dev/null # page cache and dentries warm, as for a user's second run
	"$TMP/rusage" 3 free -g >/dev/null
	i=0
	while [ $i -lt $((RUNS * ROUNDS)) ]; do
		"$TMP/rusage" 1 "$S" status --json | sed -n 's/.*wall_ms_p50=\([0-9.]*\).*/\1/p' >>"$TMP/$1.stw"
		"$TMP/rusage" 1 free -g | sed -n 's/.*wall_ms_p50=\([0-9.]*\).*/\1/p' >>"$TMP/$1.frw"
		i=$((i + 1))
	done
	med <"$TMP/$1.stw" >"$TMP/$1.st"
	med <"$TMP/$1.frw" >"$TMP/$1.fr"
}

# scrapes LABEL: a fresh serve --cache 0 and node_exporter, SCRAPES each in
# alternating rounds of 100 (kept-alive, as Prometheus scrapes); CPU a
# scrape (ms) into $TMP/LABEL.sp / .ne, PSS (KiB) into .spss / .npss
scrapes() {
	"$S" serve --listen 127.0.0.1:0 --cache 0 2>"$TMP/serve.err" &
	SP=$!
	BG="$BG $SP"
	j=0
	while ! grep -q serving "$TMP/serve.err" 2>/dev/null && [ $j -lt 200 ]; do sleep 0.05; j=$((j + 1)); done
	sport=$(sed -n 's|^.*serving http://.*:\([0-9]*\)/metrics$|\1|p' "$TMP/serve.err")
	[ -n "$sport" ] || { echo "bench_goals: serve did not start"; cat "$TMP/serve.err"; exit 1; }
	start_node_exporter "$NE" "$TMP/ne.log" || { echo "bench_goals: node_exporter did not start"; exit 1; }
	"$TMP/httpc" getk 127.0.0.1 "$sport" /metrics 20 >/dev/null # past the start-ups (dlopen, the first scan)
	"$TMP/httpc" getk 127.0.0.1 "$NE_PORT" /metrics 20 >/dev/null
	sp=0
	ne=0
	n=0
	while [ $n -lt "$SCRAPES" ]; do
		a=$(cpu_ns $SP)
		"$TMP/httpc" getk 127.0.0.1 "$sport" /metrics 100 >/dev/null
		b=$(cpu_ns $SP)
		c=$(cpu_ns $NE_PID)
		"$TMP/httpc" getk 127.0.0.1 "$NE_PORT" /metrics 100 >/dev/null
		d=$(cpu_ns $NE_PID)
		sp=$((sp + b - a))
		ne=$((ne + d - c))
		n=$((n + 100))
	done
	if ! kill -0 $SP 2>/dev/null; then
		echo "bench_goals: serve ended during the scrapes ($1):"
		cat "$TMP/serve.err"
		exit 1
	fi
	awk -v v=$sp -v n=$n 'BEGIN { printf "%.4f\n", v / 1e6 / n }' >"$TMP/$1.sp"
	awk -v v=$ne -v n=$n 'BEGIN { printf "%.4f\n", v / 1e6 / n }' >"$TMP/$1.ne"
	pss_kib $SP >"$TMP/$1.spss"
	pss_kib $NE_PID >"$TMP/$1.npss"
	stop_bg
}

# watch_cpu LABEL: watch --interval 1 and vmstat 1 side by side; CPU a
# sample (ms) over WATCH_S seconds after the first 3 into .w / .v
watch_cpu() {
	"$S" watch --interval 1 --duration $((WATCH_S + 8)) --quiet --log "$TMP/w.csv" >/dev/null 2>&1 &
	W=$!
	vmstat 1 $((WATCH_S + 8)) >/dev/null 2>&1 &
	V=$!
	BG="$BG $W $V"
	sleep 3
	w0=$(cpu_ns $W)
	v0=$(cpu_ns $V)
	t0=$(date +%s.%N)
	sleep "$WATCH_S"
	w1=$(cpu_ns $W)
	v1=$(cpu_ns $V)
	t1=$(date +%s.%N)
	awk -v v=$((w1 - w0)) -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", v / 1e6 / (b - a) }' >"$TMP/$1.w"
	awk -v v=$((v1 - v0)) -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", v / 1e6 / (b - a) }' >"$TMP/$1.v"
	stop_bg
}

idle_procs=$(procs)
walls idle
scrapes idle
watch_cpu idle
i=0
while [ $i -lt "$EXTRA" ]; do
	sleep 600 &
	SLEEPS="$SLEEPS $!"
	i=$((i + 1))
done
busy_procs=$(procs)
walls busy
scrapes busy
watch_cpu busy
stop_sleeps

v() { cat "$TMP/$1"; }
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -m), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg);" \
	"idle: $idle_procs processes, +$EXTRA: $busy_procs; fake NVML (GB10 scenario) loaded"
printf '%-46s %-8s %12s %12s %9s  %s\n' "figure" "goal" "sparkops" "anchor" "ratio" ""
row() { # NAME GOAL-TEXT SP ANCHOR RATIO OK(1/0) UNIT
	printf '%-46s %-8s %12s %12s %8.2fx  %s\n' "$1" "$2" "$3$7" "$4$7" "$5" "$([ "$6" = 1 ] && echo met || echo MISSED)"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { print (b > 0 ? a / b : 0) }'; }
le() { awk -v a="$1" -v b="$2" 'BEGIN { print (a <= b) ? 1 : 0 }'; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN { print (a >= b) ? 1 : 0 }'; }
r=$(ratio "$(v idle.st)" "$(v idle.fr)")
row "idle: status --json wall / free -g" "<= 1.5x" "$(v idle.st)" "$(v idle.fr)" "$r" "$(le "$r" 1.5)" " ms"
r=$(ratio "$(v busy.st)" "$(v busy.fr)")
row "+$EXTRA: status --json wall / free -g" "<= 4x" "$(v busy.st)" "$(v busy.fr)" "$r" "$(le "$r" 4)" " ms"
r=$(ratio "$(v idle.ne)" "$(v idle.sp)")
row "idle: fresh scrape CPU, node_exporter / serve" ">= 8x" "$(v idle.sp)" "$(v idle.ne)" "$r" "$(ge "$r" 8)" " ms"
r=$(ratio "$(v idle.npss)" "$(v idle.spss)")
row "serve PSS, node_exporter / serve" ">= 5x" "$(v idle.spss)" "$(v idle.npss)" "$r" "$(ge "$r" 5)" " KiB"
r=$(ratio "$(v busy.ne)" "$(v busy.sp)")
row "+$EXTRA: fresh scrape CPU, node_exporter / serve" ">= 2x" "$(v busy.sp)" "$(v busy.ne)" "$r" "$(ge "$r" 2)" " ms"
r=$(ratio "$(v busy.w)" "$(v busy.v)")
row "+$EXTRA: watch --interval 1 CPU a sample" "<= 0.5ms" "$(v busy.w)" "$(v busy.v)" "$r" "$(le "$(v busy.w)" 0.5)" " ms"
r=$(ratio "$(v idle.w)" "$(v idle.v)")
row "(idle: watch --interval 1 CPU a sample)" "" "$(v idle.w)" "$(v idle.v)" "$r" 1 " ms"
echo "(status and free -g: medians of $((RUNS * ROUNDS)) runs each, interleaved; scrapes: $SCRAPES each, CPU"
echo " from each server's schedstat, node_exporter with meminfo, pressure, thermal_zone and hwmon; PSS"
echo " after the scrapes; watch: the anchor is vmstat 1 over the same seconds, the goal is absolute)"
