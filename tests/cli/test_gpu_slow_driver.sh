#!/bin/sh
# SPDX-License-Identifier: MIT
# A slow driver does not stretch the samples of run/watch: the GPU waits at
# most half the interval, and its readings say timeout, never a stale value.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/jobs_lib.sh"

# --- a slow driver does not stretch the samples: the GPU waits at most half the interval ----
# slow-1s.scn: every temperature query takes 1 s. At --interval 0.2 for 2 s
# about 11 samples are due; with the GPU waiting its full 2 s deadline (the
# old behaviour) there were 3. Asserted: at least 7, no gap over 0.6 s, and
# no GPU temperature in any row (a timeout, nothing stale).
run timeout 20 env SPARKOPS_NVML_LIB=$FAKE_NVML FAKE_NVML_SCENARIO=$SC/slow-1s.scn $S watch --interval 0.2 \
	--duration 2 --log slow.csv $IDLE
expect_rc 0 "watch with a 1 s driver at --interval 0.2"
n=$(grep -c ',sample,' slow.csv)
[ "$n" -ge 7 ]
_report $? "samples keep their interval despite the slow driver ($n samples in 2 s, >= 7)"
awk -F, '$3 == "sample" { if (p != "" && $2 - p > g) g = $2 - p; p = $2 } END { exit !(g > 0 && g <= 0.6) }' slow.csv
_report $? "no gap between samples over 0.6 s (largest $(awk -F, '$3 == "sample" { if (p != "" && $2 - p > g) g = $2 - p; p = $2 } END { printf "%.3f", g }' slow.csv) s)"
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "gpu_temp_c") c = i }
	$3 == "sample" && $c != "" { bad = 1 } END { exit bad || !c }' slow.csv
_report $? "the GPU temperature is missing in every row (timeout), never a stale value"

done_testing
