#!/bin/sh
# SPDX-License-Identifier: MIT
# The sampler's cost: CPU time per sample and resident memory of
# `sparkops watch` (every source: pool, PSI, cgroup, thermal, hwmon,
# processes, the GPU thread, the job's tree, the CSV row), against `vmstat 1`
# (and `sar`, `nvidia-smi -l` where installed).
# CPU per sample is marginal: (CPU of a long run - CPU of a short run) /
# (their difference in samples), so start-up is not counted as sampling.
# Resident memory is the peak VmRSS read from /proc while it runs.
# Goal: < 1 ms CPU per sample, < 4 MiB resident. Prints ratios; never fails.
BUILD=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
S="$top/$BUILD/sparkops"
FAKE="$top/$BUILD/libfake-nvml.so"
SC="$top/tests/fake-nvml/scenarios/gb10.scn"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v python3 >/dev/null || { echo "bench_run: python3 needed"; exit 0; }

cat >"$tmp/cost.py" <<'PY'
# cost.py SAMPLES_OR_LOG CMD... : prints "cpu_seconds peak_rss_kib samples peak_pss_kib"
import os, subprocess, sys, time
what, cmd = sys.argv[1], sys.argv[2:]
p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
peak = 0
pss = 0
tick = os.sysconf("SC_CLK_TCK")
while p.poll() is None:
    try:
        with open("/proc/%d/status" % p.pid) as f:
            for l in f:
                if l.startswith("VmRSS:"):
                    peak = max(peak, int(l.split()[1]))
        with open("/proc/%d/smaps_rollup" % p.pid) as f:
            for l in f:
                if l.startswith("Pss:"):
                    pss = max(pss, int(l.split()[1]))
    except OSError:
        pass
    time.sleep(0.05)
import resource
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
n = int(what) if what.isdigit() else sum(1 for l in open(what) if ",sample," in l)
print("%.6f %d %d %d" % (ru.ru_utime + ru.ru_stime, peak, n, pss))
PY
cost() { python3 "$tmp/cost.py" "$@"; }
# marginal NAME ARGS-SHORT ARGS-LONG: per-sample CPU from two runs
per_sample() { # cpu1 n1 cpu2 n2
	echo "$1 $2 $3 $4" | awk '{ d = $4 - $2; v = 0; if (d > 0) v = ($3 - $1) / d * 1000; printf "%.3f", v }'
}
ratio() { # a b
	echo "$1 $2" | awk '{ if ($2 > 0) printf "%.2fx", $1 / $2; else printf "n/a" }'
}

G="env SPARKOPS_NVML_LIB=$FAKE FAKE_NVML_SCENARIO=$SC"
set -- $(cost "$tmp/a.csv" $G "$S" watch --interval 0.1 --duration 0.5 --log "$tmp/a.csv")
a_cpu=$1 a_n=$3
set -- $(cost "$tmp/b.csv" $G "$S" watch --interval 0.1 --duration 4.5 --log "$tmp/b.csv")
b_cpu=$1 b_rss=$2 b_n=$3 b_pss=$4
sp_ms=$(per_sample $a_cpu $a_n $b_cpu $b_n)
echo "sparkops watch, 1 sample/0.1s, fake GB10 NVML: $sp_ms ms CPU per sample, peak RSS $(echo $b_rss | awk '{printf "%.1f", $1/1024}') MiB, PSS $(echo $b_pss | awk '{printf "%.1f", $1/1024}') MiB ($b_n samples)"

sleep 30 &
bg=$!
set -- $(cost "$tmp/c.csv" "$S" watch --interval 0.1 --duration 0.5 --pid $bg --log "$tmp/c.csv")
c_cpu=$1 c_n=$3
set -- $(cost "$tmp/d.csv" "$S" watch --interval 0.1 --duration 4.5 --pid $bg --log "$tmp/d.csv")
d_cpu=$1 d_rss=$2 d_n=$3
kill $bg 2>/dev/null
echo "sparkops watch --pid (the job's tree too):      $(per_sample $c_cpu $c_n $d_cpu $d_n) ms CPU per sample, peak RSS $(echo $d_rss | awk '{printf "%.1f", $1/1024}') MiB"

# side by side at 1 s for 6 samples, start-up included for both (vmstat's
# own per-sample CPU is below the kernel's accounting resolution)
set -- $(cost "$tmp/e.csv" $G "$S" watch --interval 1 --duration 5.5 --log "$tmp/e.csv")
e_cpu=$1 e_n=$3
e_ms=$(echo "$e_cpu $e_n" | awk '{printf "%.3f", $1 / $2 * 1000}')
echo "sparkops watch --interval 1, 6 s, start-up included: $e_ms ms CPU per sample ($e_n samples)"
if command -v vmstat >/dev/null; then
	set -- $(cost 6 vmstat 1 6)
	vm_ms=$(echo "$1" | awk '{printf "%.3f", $1 / 6 * 1000}')
	vrss=$2 vpss=$4
	echo "vmstat 1 6, start-up included:                   $vm_ms ms CPU per sample, peak RSS $(echo $vrss | awk '{printf "%.1f", $1/1024}') MiB, PSS $(echo $vpss | awk '{printf "%.1f", $1/1024}') MiB"
	echo "ratio sparkops/vmstat: CPU per sample $(ratio $e_ms $vm_ms), RSS $(ratio $b_rss $vrss), PSS $(ratio $b_pss $vpss)"
fi
if command -v sar >/dev/null; then
	set -- $(cost 6 sar -A 1 6)
	echo "sar -A 1 6, start-up included:                   $(echo "$1" | awk '{printf "%.3f", $1 / 6 * 1000}') ms CPU per sample"
fi
if command -v nvidia-smi >/dev/null; then
	q="--query-gpu=temperature.gpu,power.draw,clocks.sm,utilization.gpu,clocks_event_reasons.active --format=csv"
	set -- $(cost 2 timeout 1.2 nvidia-smi $q -lms 500)
	n1=$1
	set -- $(cost 8 timeout 4.2 nvidia-smi $q -lms 500)
	echo "nvidia-smi -lms 500:                           $(per_sample $n1 2 $1 8) ms CPU per sample, peak RSS $(echo $2 | awk '{printf "%.1f", $1/1024}') MiB"
fi
echo "goal: < 1 ms CPU per sample, < 4 MiB resident (RSS counts shared library pages"
echo "      other processes map too; PSS charges each page to its sharers)"
