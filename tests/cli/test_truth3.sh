#!/bin/sh
# SPDX-License-Identifier: MIT
# "Every message true", the items still open (test_truth.sh holds the first ones).
. "$(dirname "$0")/lib.sh"
SC="$(dirname "$0")/../fake-nvml/scenarios"
S=$SPARKOPS
NODRV="env SPARKOPS_NVML_LIB=/nonexistent/libnvidia-ml.so.1"
DISC="env SPARKOPS_NVML_LIB=$FAKE_NVML FAKE_NVML_SCENARIO=$SC/discrete.scn"

# --- 10. plan's LoRA targets are the ones the trainable count counts ------------------
run $NODRV $S plan gpt-oss-20b --method lora $(sysroot gb10-idle)
expect_out 'LoRA r=16 on q,k,v,o \(gate,up,down: .*not counted\)' "gpt-oss: the header lists the attention targets it counts, and says why the MLP ones are not"
expect_no_out 'on q,k,v,o,gate,up,down' "not 'on q..down' next to an attention-only count"
run $NODRV $S plan gpt-oss-20b --method lora --json $(sysroot gb10-idle)
expect_jq '.settings.lora_targets_counted == "q,k,v,o"' "JSON: lora_targets_counted"
run $NODRV $S plan llama-3.1-8b --method lora $(sysroot gb10-idle)
expect_out 'LoRA r=16 on q,k,v,o,gate,up,down$' "a dense model still lists all seven"

# --- 4. the evidence in the log reads as text: spaces kept, the field quoted ----------
# a log from before (evidence with underscores) and one from now (spaces, a comma:
# the field CSV-quoted); report reads both, the evidence whole
sed 's/^\(.*,event,episode_start,\)cause=thermal drop_pct=23.5 baseline=3.10 rate=2.37,/\1cause=thermal drop_pct=23.5 baseline=3.10 rate=2.37 evidence=sw_thermal_slowdown_on,/' \
	"$FIX/logs/thermal-guard.csv" >"$TMP/ev-old.csv"
sed 's/^\(.*,event,episode_start,\)cause=thermal drop_pct=23.5 baseline=3.10 rate=2.37,/\1"cause=thermal drop_pct=23.5 baseline=3.10 rate=2.37 evidence=sw thermal slowdown on, GPU 88 C",/' \
	"$FIX/logs/thermal-guard.csv" >"$TMP/ev-new.csv"
run $S report --json "$TMP/ev-old.csv"
expect_jq '.episodes[0].evidence == "sw_thermal_slowdown_on" and .episodes[0].cause == "thermal"' "an old log: the evidence as it was written"
run $S report --json "$TMP/ev-new.csv"
expect_jq '.episodes[0].evidence == "sw thermal slowdown on, GPU 88 C"' "a new log: the evidence readable, spaces and comma kept"
expect_jq '.episodes[0].cause == "thermal" and (.episodes[0].drop_pct | floor) == 23' "and the keys before it still read"
$S report --svg "$TMP/ev.svg" "$TMP/ev-new.csv" >/dev/null 2>&1
OUT=$TMP/ev.svg
expect_out '<title>slowdown: thermal -24%: sw thermal slowdown on, GPU 88 C</title>' "the chart's episode says its evidence"

# --- 6. a server's cap is a fraction of the GPU's memory on a discrete GPU ------------
# the discrete fixture: 503.5 GiB of host RAM, an 80 GB card (85520809984 bytes),
# SGLang --mem-fraction-static 0.80: 0.80 x 79.6 GiB = 63.7 GiB, not 402.8 GiB
run $DISC $S status $(sysroot discrete)
expect_out 'sglang .*0\.80 = 63\.7 GiB of the GPU memory \(--mem-fraction-static\)' "status: the cap in GiB of the card"
expect_no_out '402\.8 GiB' "not 0.80 of the host RAM"
run $DISC $S status $(sysroot discrete) --json
expect_jq '[.processes[] | select(.name=="sglang")][0] | .cap_bytes == 68416647987 and .cap_of == "gpu"' "status --json: cap_bytes of the GPU's memory"
run $NODRV $S status $(sysroot gb10-loaded) --json
expect_jq '[.processes[] | select(.cap_fraction != null)] | all(.cap_of == "pool")' "on UMA (no GPU reading) the cap stays a share of the pool"

# --- 12. the summary says the job's peak RSS (the log's job_rss_bytes) -----------------
run $S report "$FIX/logs/thermal-guard.csv"
expect_out '^  job RSS +peak 30\.0 GiB' "report's summary: the job's peak RSS"
run $S report --json "$FIX/logs/thermal-guard.csv"
expect_jq '.peak_job_rss_bytes == 32212254720' "report --json: peak_job_rss_bytes"

done_testing
