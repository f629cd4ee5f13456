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
