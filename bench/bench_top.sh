#!/bin/sh
# SPDX-License-Identifier: MIT
# sparkops top side by side with htop and btop, each refreshing every second
# for DUR seconds (default 20) in its own 120x40 tmux session on this
# machine: CPU per refresh (utime+stime from /proc/PID/stat, and the
# nanosecond schedstat of every thread for precision) and RSS (VmRSS, peak
# VmHWM); then the ratios. Goal: less CPU per refresh than each, under 8 MiB.
# Usage: bench/bench_top.sh [BUILD]   (DUR=S)
BUILD=${1:-build}
cd "$(dirname "$0")/.." || exit 2
S="$(pwd)/$BUILD/sparkops"
DUR=${DUR:-20}
WARM=3
[ -x "$S" ] || { echo "bench_top: build first ($S missing)"; exit 2; }
# the deps step: tmux drives the terminals; htop and btop are what we compare with
if ! command -v tmux >/dev/null 2>&1 && ! scripts/deps.sh tmux; then
	echo "bench_top: skipped (tmux is not installed and could not be installed)"
	exit 0
fi
for p in htop btop; do
	command -v $p >/dev/null 2>&1 || scripts/deps.sh $p >/dev/null 2>&1 ||
		echo "bench_top: $p is not installed and could not be (apt-get install $p): its row is skipped"
done
TMP=$(mktemp -d)
SOCK="$TMP/tmux.sock"
tm() { tmux -S "$SOCK" -f /dev/null "$@"; }
cleanup() {
	tm kill-server 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

# btop refreshes every 2 s unless told; a config of its own, in a home of its own
mkdir -p "$TMP/home/.config/btop"
printf 'update_ms = 1000\nshown_boxes = "cpu mem net proc"\n' >"$TMP/home/.config/btop/btop.conf"

tools="sparkops"
tm new-session -d -s sparkops -x 120 -y 40 "exec env LANG=C.UTF-8 TERM=screen-256color $S top --interval 1"
if command -v htop >/dev/null 2>&1; then
	tools="$tools htop"
	tm new-session -d -s htop -x 120 -y 40 "exec env LANG=C.UTF-8 TERM=screen-256color HOME=$TMP/home htop -d 10"
fi
if command -v btop >/dev/null 2>&1; then
	tools="$tools btop"
	tm new-session -d -s btop -x 120 -y 40 "exec env LANG=C.UTF-8 TERM=screen-256color HOME=$TMP/home XDG_CONFIG_HOME=$TMP/home/.config btop --utf-force"
fi
sleep $WARM

ticks() { awk '{ sub(/^[^)]*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; } # utime + stime (fields 14, 15)
sched() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.0f", s }'; }
for t in $tools; do
	pid=$(tm display -p -t "$t" '#{pane_pid}')
	echo "$t $pid $(ticks "$pid") $(sched "$pid")" >>"$TMP/t0"
done
sleep "$DUR"
hz=$(getconf CLK_TCK)
printf '%-9s %9s %20s %22s %9s %9s\n' tool refreshes "cpu_ms/refresh(stat)" "cpu_ms/refresh(sched)" rss_kib hwm_kib
while read -r t pid tk0 ns0; do
	if ! kill -0 "$pid" 2>/dev/null; then
		echo "$t: ended during the bench (skipped)"
		continue
	fi
	tk1=$(ticks "$pid")
	ns1=$(sched "$pid")
	rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status")
	hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status")
	awk -v t="$t" -v n="$DUR" -v a="$tk0" -v b="$tk1" -v x="$ns0" -v y="$ns1" -v hz="$hz" -v rss="$rss" -v hwm="$hwm" \
		'BEGIN { printf "%-9s %9d %20.2f %22.3f %9d %9d\n", t, n, (b - a) * 1000 / hz / n, (y - x) / 1e6 / n, rss, hwm }' |
		tee -a "$TMP/rows"
done <"$TMP/t0"

awk -v goal_kib=8192 '
	{ cpu[$1] = $4; rss[$1] = $5 }
	END {
		if (!("sparkops" in cpu)) exit 1
		ok = rss["sparkops"] < goal_kib
		for (t in cpu) if (t != "sparkops") {
			printf "sparkops/%s: cpu per refresh x%.2f, rss x%.2f\n", t, cpu["sparkops"] / (cpu[t] > 0 ? cpu[t] : 1e-9), rss["sparkops"] / rss[t]
			if (cpu["sparkops"] >= cpu[t]) ok = 0
		}
		printf "goal (less CPU per refresh than each, RSS under 8 MiB): %s\n", ok ? "met" : "NOT met"
	}' "$TMP/rows"
