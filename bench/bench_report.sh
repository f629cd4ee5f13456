#!/bin/sh
# SPDX-License-Identifier: MIT
# sparkops report on a week of 1 s samples (600,000 rows, ~150 MB of CSV):
# wall time and peak memory, next to gnuplot drawing the same five panels from
# the same file (bench/bench_report.gp), and python3 + pandas + matplotlib when
# they are installed. Goal: under 1 s and under 16 MiB.
# Usage: bench/bench_report.sh [BUILD]   (BENCH_HOURS=168 BENCH_STEP=1 to change the log)
BUILD=${1:-build}
cd "$(dirname "$0")/.." || exit 2
BIN=$BUILD/sparkops
HOURS=${BENCH_HOURS:-168}
STEP=${BENCH_STEP:-1}
[ -x "$BIN" ] || { echo "bench_report: $BIN not built (make first)"; exit 2; }
if [ ! -x /usr/bin/time ]; then
	scripts/deps.sh time >/dev/null 2>&1 || true
fi
if [ ! -x /usr/bin/time ]; then
	echo "bench_report: skipped: /usr/bin/time is missing (Debian package 'time'; run as root: apt-get install time)"
	exit 0
fi
command -v python3 >/dev/null || { echo "bench_report: skipped: python3 is needed to generate the log"; exit 0; }
# the comparisons: Debian's gnuplot and pandas+matplotlib (Debian's python, not a pyenv one)
command -v gnuplot >/dev/null || scripts/deps.sh gnuplot-nox >/dev/null 2>&1 || true
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
"$PY" -c 'import pandas, matplotlib' 2>/dev/null ||
	scripts/deps.sh python3-matplotlib python3-pandas >/dev/null 2>&1 || true

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
log=$tmp/week.csv
python3 tests/fixtures/logs/mklogs.py long "$log" "$HOURS" "$STEP" || exit 1
rows=$(($(wc -l <"$log") - 1))
mb=$(($(wc -c <"$log") / 1000000))
echo "log: $rows rows, $mb MB ($HOURS h at $STEP s)"

# best of N runs: "seconds KiB"
measure() {
	n=$1
	shift
	best=""
	for i in $(seq "$n"); do
		/usr/bin/time -f '%e %M' -o "$tmp/t" "$@" >/dev/null 2>"$tmp/err" || { echo "FAILED"; cat "$tmp/err" >&2; return 1; }
		cur=$(tail -1 "$tmp/t")
		best=$(printf '%s\n%s\n' "$best" "$cur" | awk 'NF==2' | sort -n | head -1)
	done
	echo "$best"
}
show() { # name "secs kib"
	echo "$2" | awk -v n="$1" '{printf "  %-28s %6.2f s  %7.1f MiB\n", n, $1, $2 / 1024}'
}

s=$(measure 3 "$BIN" report "$log" --svg "$tmp/sparkops.svg") || exit 1
show "sparkops report --svg" "$s"
sz=$(wc -c <"$tmp/sparkops.svg")
echo "  (the SVG: $((sz / 1024)) KiB)"
st=$(echo "$s" | cut -d' ' -f1); sm=$(echo "$s" | cut -d' ' -f2)

if command -v gnuplot >/dev/null; then
	g=$(measure 1 gnuplot -e "log='$log'; out='$tmp/gnuplot.svg'" bench/bench_report.gp) && {
		show "gnuplot (same panels)" "$g"
		echo "  (its SVG: $(($(wc -c <"$tmp/gnuplot.svg") / 1024)) KiB)"
		echo "$g" | awk -v t="$st" -v m="$sm" '{printf "  ratio gnuplot/sparkops: time %.1fx, memory %.1fx\n", ($1 > 0 ? $1 : 0.01) / (t > 0 ? t : 0.01), $2 / m}'
	}
else
	echo "  gnuplot: not installed (Debian package gnuplot-nox; run as root: apt-get install gnuplot-nox)"
fi

if "$PY" -c 'import pandas, matplotlib' 2>/dev/null; then
	cat >"$tmp/plot.py" <<'PY'
import sys
import matplotlib
matplotlib.use("svg")
import matplotlib.pyplot as plt
import pandas as pd
d = pd.read_csv(sys.argv[1])
d = d[d["type"] == "sample"]
t = pd.to_datetime(d["unix_time"], unit="s")
f, ax = plt.subplots(5, 1, sharex=True, figsize=(12, 9.2))
g = 2 ** 30
ax[0].plot(t, (d.mem_total_bytes - d.mem_free_bytes) / g); ax[0].plot(t, d.mem_total_bytes / g, "--"); ax[0].plot(t, d.budget_now_bytes / g)
ax[1].plot(t, d.gpu_temp_c); ax[1].plot(t, d.soc_temp_c)
ax[2].plot(t, d.gpu_power_w); ax[2].plot(t, d.sys_power_w); ax[2].plot(t, d.pl1_w); ax[2].plot(t, d.pl1_cap_w, "--")
ax[3].plot(t, d.gpu_sm_clock_mhz)
ax[4].plot(t, d.throughput)
f.savefig(sys.argv[2])
PY
	p=$(measure 1 "$PY" "$tmp/plot.py" "$log" "$tmp/mpl.svg") && {
		show "pandas + matplotlib" "$p"
		echo "$p" | awk -v t="$st" -v m="$sm" '{printf "  ratio matplotlib/sparkops: time %.1fx, memory %.1fx\n", $1 / (t > 0 ? t : 0.01), $2 / m}'
	}
else
	echo "  pandas + matplotlib: not installed (run as root: apt-get install python3-pandas python3-matplotlib)"
fi

echo "$s" | awk '{
	ok_t = $1 < 1.0; ok_m = $2 / 1024 < 16
	printf "  goal: under 1 s (%s), under 16 MiB (%s)\n", ok_t ? "met" : "MISSED", ok_m ? "met" : "MISSED"
}'
