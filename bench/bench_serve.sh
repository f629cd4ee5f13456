#!/bin/sh
# SPDX-License-Identifier: MIT
# sparkops serve against prometheus-node-exporter restricted to the same
# sources (meminfo, pressure, thermal_zone, hwmon), same machine, same run,
# same load: scrape latency p50/p99, CPU per scrape, resident memory.
# Both read fresh values on every scrape (sparkops with --cache 0).
# The goals are judged by bench/bench_goals.sh (one serve alone, as users run it).
# Usage: bench/bench_serve.sh [BUILD] (SCRAPES=N rounds of 100 alternate)
BUILD=${1:-build}
cd "$(dirname "$0")/.." || exit 2
. bench/lib.sh
top=$(pwd)
S="$top/$BUILD/sparkops"
ROUNDS=${ROUNDS:-5}
PER=${PER:-100}
[ -x "$S" ] || { echo "bench_serve: build first ($S missing)"; exit 2; }
scripts/deps.sh prometheus-node-exporter || { echo "bench_serve: skipped (prometheus-node-exporter missing)"; exit 0; }
NE=$(command -v prometheus-node-exporter || echo /usr/bin/prometheus-node-exporter)
TMP=$(mktemp -d)
SP_PID=""
NE_PID=""
cleanup() {
	[ -n "$SP_PID" ] && kill $SP_PID 2>/dev/null
	[ -n "$NE_PID" ] && kill "$NE_PID" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM
${CC:-cc} -O2 -o "$TMP/httpc" tests/tools/httpc.c || exit 2
HZ=$(getconf CLK_TCK)

# sparkops serve on free ports (it says which): the same sources as the
# node_exporter collectors below (--no-processes), and everything it reads
start_sp() { # NAME ARGS...
	name=$1
	shift
	"$S" serve --listen 127.0.0.1:0 --cache 0 "$@" 2>"$TMP/$name.err" &
	eval "${name}_PID=$!"
	i=0
	while ! grep -q serving "$TMP/$name.err" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	a=$(sed -n 's|^.*serving http://\(.*\)/metrics$|\1|p' "$TMP/$name.err")
	[ -n "$a" ] || { echo "bench_serve: sparkops serve did not start"; cat "$TMP/$name.err"; exit 1; }
	eval "${name}_PORT=${a##*:}"
}
start_sp sp --no-processes
start_sp spall
SP_PID="$sp_PID $spall_PID"
# node_exporter with the equivalent collectors, on a free port
start_node_exporter "$NE" "$TMP/ne.log"
[ -n "$NE_PID" ] || { echo "bench_serve: node_exporter did not start"; cat "$TMP/ne.log"; exit 1; }

# CPU time of every thread in ns (schedstat), finer than the 10 ms ticks of /proc/PID/stat
ticks() { cat /proc/$1/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%.0f\n", s / 1000}'; }
rss() { awk '/^VmRSS:/{print $2}' "/proc/$1/status"; }
hwm() { awk '/^VmHWM:/{print $2}' "/proc/$1/status"; }
# PSS (shared pages divided among their users) and USS (pages only this process has)
pss() { awk '/^Pss:/{print $2}' "/proc/$1/smaps_rollup"; }
uss() { awk '/^Private_(Clean|Dirty):/{s += $2} END {print s}' "/proc/$1/smaps_rollup"; }

ne_PID=$NE_PID
ne_PORT=$NE_PORT
# warm up
for n in sp spall ne; do
	eval "port=\$${n}_PORT"
	"$TMP/httpc" get 127.0.0.1 $port /metrics 20 >/dev/null
	curl -s "http://127.0.0.1:$port/metrics" >"$TMP/$n.body"
	eval "${n}_bytes=$(wc -c <"$TMP/$n.body")"
	eval "${n}_series=$(grep -vc '^#' "$TMP/$n.body")"
done

measure() { # VERB MODE-TEXT
VERB=$1
MODE=$2
for n in sp spall ne; do eval "${n}_t=0"; : >"$TMP/$n.lat"; done
# alternate rounds so all three see the same load
r=0
while [ $r -lt "$ROUNDS" ]; do
	for n in sp spall ne; do
		eval "pid=\$${n}_PID; port=\$${n}_PORT; t=\$${n}_t"
		a=$(ticks $pid)
		"$TMP/httpc" $VERB 127.0.0.1 $port /metrics "$PER" >>"$TMP/$n.lat"
		b=$(ticks $pid)
		eval "${n}_t=$((t + b - a))"
	done
	r=$((r + 1))
done
N=$((ROUNDS * PER))
# p50/p99: the median over rounds of each round's figure
med() { sort -n | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}'; }
row() { # NAME -> "ticks p50 p99 fails rss hwm bytes series"
	eval "pid=\$${1}_PID; t=\$${1}_t; by=\$${1}_bytes; se=\$${1}_series"
	p50=$(sed -n 's/.*p50_ms=\([0-9.]*\).*/\1/p' "$TMP/$1.lat" | med)
	p99=$(sed -n 's/.*p99_ms=\([0-9.]*\).*/\1/p' "$TMP/$1.lat" | med)
	f=$(sed -n 's/.*fail=\([0-9]*\).*/\1/p' "$TMP/$1.lat" | awk '{s+=$1} END{print s+0}')
	echo "$t $p50 $p99 $f $(rss $pid) $(hwm $pid) $by $se $(pss $pid) $(uss $pid)"
}
{ row sp; row spall; row ne; } | awk -v n=$N -v hz=$HZ -v mode="$MODE" '
{ t[NR]=$1; p50[NR]=$2; p99[NR]=$3; f[NR]=$4; rss[NR]=$5; hwm[NR]=$6; by[NR]=$7; se[NR]=$8; pss[NR]=$9; uss[NR]=$10 }
END {
	for (i = 1; i <= 3; i++) cpu[i] = t[i] / 1e3 / n
	printf "%d scrapes each, %s, alternating rounds of 100, fresh readings on every scrape (sparkops --cache 0)\n", n, mode
	printf "%-22s %16s %16s %14s %12s %12s\n", "", "sparkops (same", "sparkops (all,", "node_exporter", "ratio", "ratio"
	printf "%-22s %16s %16s %14s %12s %12s\n", "", "sources)", "+ processes)", "", "same src", "all"
	printf "%-22s %16.3f %16.3f %14.3f %11.1fx %11.1fx\n", "latency p50 (ms)", p50[1], p50[2], p50[3], p50[3]/p50[1], p50[3]/p50[2]
	printf "%-22s %16.3f %16.3f %14.3f %11.1fx %11.1fx\n", "latency p99 (ms)", p99[1], p99[2], p99[3], p99[3]/p99[1], p99[3]/p99[2]
	printf "%-22s %16.4f %16.4f %14.4f %11.1fx %11.1fx\n", "CPU per scrape (ms)", cpu[1], cpu[2], cpu[3], cpu[1] ? cpu[3]/cpu[1] : 0, cpu[2] ? cpu[3]/cpu[2] : 0
	printf "%-22s %16d %16d %14d %11.1fx %11.1fx\n", "RSS after (KiB)", rss[1], rss[2], rss[3], rss[3]/rss[1], rss[3]/rss[2]
	printf "%-22s %16d %16d %14d %11.1fx %11.1fx\n", "peak RSS (KiB)", hwm[1], hwm[2], hwm[3], hwm[3]/hwm[1], hwm[3]/hwm[2]
	printf "%-22s %16d %16d %14d %11.1fx %11.1fx\n", "PSS (KiB)", pss[1], pss[2], pss[3], pss[3]/pss[1], pss[3]/pss[2]
	printf "%-22s %16d %16d %14d %11.1fx %11.1fx\n", "USS, private (KiB)", uss[1], uss[2], uss[3], uss[3]/uss[1], uss[3]/uss[2]
	printf "%-22s %16d %16d %14d\n", "exposition bytes", by[1], by[2], by[3]
	printf "%-22s %16d %16d %14d\n", "samples", se[1], se[2], se[3]
	printf "%-22s %16d %16d %14d\n", "failed scrapes", f[1], f[2], f[3]
	printf "(the goals are judged by bench_goals.sh: here two sparkops serves run at once and share their\n"
	printf " libraries\047 pages, which PSS divides between them, so each one\047s PSS reads about half its own)\n"
}'
}
measure getk "one kept-alive connection (as Prometheus scrapes)"
echo
measure get "a new connection per scrape"
echo "(CPU from /proc/PID/task/*/schedstat over all scrapes; 'all' adds the /proc scan for servers and"
echo " trainers, $(ls /proc | grep -c '^[0-9]') processes here, which node_exporter's four collectors do not do;"
echo " sparkops also reads its cgroup (limit, usage, OOM counters) for the budget. RSS counts shared"
echo " library pages: Debian's libmicrohttpd brings GnuTLS, p11-kit and nettle (~2 MiB resident) even"
echo " though /metrics is plain HTTP; node_exporter is one static Go binary, so its RSS is all its own)"
