# SPDX-License-Identifier: MIT
# Shared by the benches: sourced, not run.

# start_node_exporter NE LOGFILE: prometheus-node-exporter with the collectors
# equivalent to sparkops' readings (meminfo, pressure, thermal_zone, hwmon) on
# a free loopback port; sets NE_PID and NE_PORT (NE_PID empty when it would not
# start after five ports).
start_node_exporter() {
	NE_PID=""
	for try in 1 2 3 4 5; do
		NE_PORT=$((30000 + ($$ + try * 7919) % 20000))
		"$1" --web.listen-address=127.0.0.1:$NE_PORT --collector.disable-defaults \
			--collector.meminfo --collector.pressure --collector.thermal_zone --collector.hwmon \
			>"$2" 2>&1 &
		NE_PID=$!
		i=0
		while [ $i -lt 50 ] && kill -0 $NE_PID 2>/dev/null; do
			curl -s -o /dev/null "http://127.0.0.1:$NE_PORT/metrics" && break
			sleep 0.1
			i=$((i + 1))
		done
		kill -0 $NE_PID 2>/dev/null && return 0
		NE_PID=""
	done
	return 1
}

# CPU nanoseconds of every thread of a process (schedstat)
cpu_ns() { cat /proc/$1/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%.0f\n", s}'; }
now_s() { date +%s.%N; }
# the median of the numbers on stdin (0 when there are none)
med() { sort -n | awk '{v[NR]=$1} END{if (NR) print v[int((NR+1)/2)]; else print 0}'; }
# PSS in KiB of a process (smaps_rollup), 0 when unreadable
pss_kib() { awk '/^Pss:/ {print $2; f = 1} END {if (!f) print 0}' /proc/$1/smaps_rollup 2>/dev/null || echo 0; }

# The background processes a bench starts: BG (its own servers and
# samplers), NE_PID (node_exporter), SLEEPS (the extra processes), each
# ended by PID; TMP removed. bench_cleanup_traps: on exit, and a signal ends
# the script (the EXIT trap cleans up: a trap that only cleaned up let the
# loop go on starting processes).
stop_bg() {
	for p in $BG $NE_PID; do kill "$p" 2>/dev/null; done
	for p in $BG $NE_PID; do wait "$p" 2>/dev/null; done
	BG=""
	NE_PID=""
}
stop_sleeps() { # exactly the processes started here, by PID
	for p in $SLEEPS; do kill "$p" 2>/dev/null; done
	for p in $SLEEPS; do wait "$p" 2>/dev/null; done
	SLEEPS=""
}
cleanup() {
	stop_bg
	stop_sleeps
	rm -rf "$TMP"
}
bench_cleanup_traps() {
	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}
