#!/bin/sh
# SPDX-License-Identifier: MIT
# plan's human figures in the unit that shows them: no "0.0 GiB" for a
# 320 KiB cache per token, no "0.00 s" hiding that TP decode is
# latency-bound (the per-step all-reduces and their size are said).
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
R=$(sysroot gb10-idle)
run $S plan llama-3.1-8b --method infer $R
expect_rc 0 "plan an inference run"
expect_out 'KV cache per token of one sequence: [0-9.]+ KiB' "the KV cache per token in KiB"
expect_no_out '0\.0 GiB' "no figure rounds to 0.0 GiB"
run $S plan llama-3.1-70b --method infer --nodes 2 --strategy tp $R
expect_rc 0 "plan TP across two nodes"
expect_out 'each decode step makes 160 all-reduces \(2 a layer\) of 16\.0 KiB each' "TP decode: the all-reduces and their size"
expect_out 'latency-bound' "TP decode is said to be latency-bound"
expect_no_out '0\.00 s|0\.0 GiB' "no 0.00 s, no 0.0 GiB"
run $S plan llama-3.1-70b --method infer --nodes 2 --strategy tp --json $R
expect_jq '.link.all_reduces_per_step == 160 and .link.message_bytes == 16384 and .link.bound == "latency"' \
	"--json: the all-reduces, their size, latency-bound"
run $S plan llama-3.1-8b --method lora --nodes 2 --strategy ddp $R
expect_out 'link: each node sends [0-9.]+ (GiB|MiB) per optimizer step: [0-9.]+ (s|ms|us) at 200 Gb/s' "DDP: the time in the unit that shows it"
done_testing
