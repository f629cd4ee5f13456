#!/bin/sh
# SPDX-License-Identifier: MIT
# One look at the memory, three ways, side by side in one run:
#   sparkops status --json   (every source: pool, budget, cgroup, PSI, sensors, NVML, processes)
#   free -g                  (the pool only)
#   one node_exporter scrape (meminfo, pressure, thermal_zone, hwmon; a warm exporter)
# Wall time (median), CPU time (mean) and peak RSS, and the ratios.
# Usage: bench/bench_status.sh [BUILD]   (RUNS=N, default 50)
BUILD=${1:-build}
cd "$(dirname "$0")/.." || exit 2
. bench/lib.sh
S="$(pwd)/$BUILD/sparkops"
RUNS=${RUNS:-50}
[ -x "$S" ] || { echo "bench_status: build first ($S missing)"; exit 2; }
command -v free >/dev/null 2>&1 || scripts/deps.sh procps || exit 0
TMP=$(mktemp -d)
NE_PID=""
cleanup() {
	[ -n "$NE_PID" ] && kill "$NE_PID" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM
${CC:-cc} -O2 -o "$TMP/rusage" tests/tools/rusage.c || exit 2
${CC:-cc} -O2 -o "$TMP/httpc" tests/tools/httpc.c || exit 2

# the two one-shot commands, interleaved in rounds of 10
: >"$TMP/sp"; : >"$TMP/free"
r=0
while [ $r -lt $((RUNS / 10)) ]; do
	"$TMP/rusage" 10 "$S" status --json >>"$TMP/sp"
	"$TMP/rusage" 10 free -g >>"$TMP/free"
	r=$((r + 1))
done

# node_exporter: CPU of the exporter per scrape (schedstat), scrape wall time, its RSS
ne_line="skipped (prometheus-node-exporter not installed)"
if scripts/deps.sh prometheus-node-exporter 2>/dev/null; then
	NE=$(command -v prometheus-node-exporter || echo /usr/bin/prometheus-node-exporter)
	start_node_exporter "$NE" "$TMP/ne.log"
	port=$NE_PORT
	if [ -n "$NE_PID" ]; then
		"$TMP/httpc" get 127.0.0.1 $port /metrics 10 >/dev/null
		cpu0=$(cat /proc/$NE_PID/task/*/schedstat | awk '{s += $1} END {printf "%.0f", s}')
		"$TMP/httpc" get 127.0.0.1 $port /metrics "$RUNS" >"$TMP/ne"
		cpu1=$(cat /proc/$NE_PID/task/*/schedstat | awk '{s += $1} END {printf "%.0f", s}')
		rss=$(awk '/^VmHWM:/{print $2}' /proc/$NE_PID/status)
		ne_line=$(awk -v c0=$cpu0 -v c1=$cpu1 -v n=$RUNS -v rss=$rss \
			'{ sub(/.*p50_ms=/, ""); sub(/ .*/, ""); printf "wall_ms_p50=%s cpu_ms_mean=%.3f maxrss_kib=%d fails=0\n", $0, (c1 - c0) / 1e6 / n, rss }' "$TMP/ne")
	fi
fi
echo "$ne_line" >"$TMP/ne.sum"

# node_exporter cold: what one snapshot costs when no exporter is running
# (start it, wait for the first answer, one scrape, stop): the fair match for
# a one-shot command. CPU from wait4() of the shell, which waits for both.
cold_line=""
if [ -n "${NE:-}" ]; then
	cat >"$TMP/ne_once.sh" <<EOS
port=\$((40000 + \$\$ % 20000))
"$NE" --web.listen-address=127.0.0.1:\$port --collector.disable-defaults --collector.meminfo \\
	--collector.pressure --collector.thermal_zone --collector.hwmon >/dev/null 2>&1 &
pid=\$!
i=0
until "$TMP/httpc" get 127.0.0.1 \$port /metrics 1 >/dev/null 2>&1; do
	i=\$((i + 1)); [ \$i -gt 200 ] && break; sleep 0.01
done
kill \$pid; wait \$pid 2>/dev/null
EOS
	cold_line=$("$TMP/rusage" $((RUNS / 5 > 0 ? RUNS / 5 : 1)) sh "$TMP/ne_once.sh")
fi

summ() { # file of rusage lines -> "wall cpu rss": median of the rounds' medians, mean CPU, max RSS
	w=$(sed -n 's/.*wall_ms_p50=\([0-9.]*\).*/\1/p' "$1" | sort -n | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}')
	awk -v w="$w" '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	       c += v["cpu_ms_mean"]; if (v["maxrss_kib"] + 0 > r) r = v["maxrss_kib"] + 0 }
	     END { printf "%s %.3f %d\n", w, c / NR, r }' "$1"
}
sp=$(summ "$TMP/sp")
fr=$(summ "$TMP/free")
if grep -q wall_ms "$TMP/ne.sum"; then ne=$(summ "$TMP/ne.sum"); else ne="0 0 0"; fi
echo "$RUNS runs each, same machine, same run ($(ls /proc | grep -c '^[0-9]') processes; NVML: $( [ -e /dev/nvidiactl ] && echo present || echo absent))"
if [ -n "$cold_line" ]; then
	echo "$cold_line" >"$TMP/cold"
	cold=$(summ "$TMP/cold")
else
	cold="0 0 0"
fi
echo "$sp $fr $ne $cold" | awk '{
	printf "%-20s %18s %12s %18s %20s\n", "", "sparkops status", "free -g", "node_exporter", "node_exporter"
	printf "%-20s %18s %12s %18s %20s\n", "", "--json", "", "(one warm scrape)", "(start, scrape, stop)"
	printf "%-20s %18.3f %12.3f %18.3f %20.3f\n", "wall time (ms)", $1, $4, $7, $10
	printf "%-20s %18.3f %12.3f %18.3f %20.3f\n", "CPU time (ms)", $2, $5, $8, $11
	printf "%-20s %18d %12d %18d %20d\n", "peak RSS (KiB)", $3, $6, $9, $12
	printf "ratios, sparkops against: free -g  wall %.2fx  CPU %.2fx  RSS %.2fx\n", $1 / $4, $2 / $5, $3 / $6
	if ($7 > 0)
		printf "                          node_exporter  wall %.2fx  CPU %.2fx  RSS %.2fx (above 1: sparkops costs more)\n", $1 / $7, $2 / $8, $3 / $9
	if ($10 > 0)
		printf "                          node_exporter cold: sparkops uses %.1fx less CPU, %.1fx less wall time\n", $11 / $2, $10 / $1
}'
echo "(free reads /proc/meminfo only; sparkops status also reads the cgroup, PSI, sensors, NVML and"
echo " scans /proc for servers and trainers, and pays a process start; node_exporter is already running)"
