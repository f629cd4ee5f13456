#!/bin/sh
# SPDX-License-Identifier: MIT
# sparkops plan across Sparks: the JSON contract of --nodes / --strategy /
# --link-gbps (nodes, strategy, terms_per_node, per_node_*_bytes, link), the
# refusal of training over tensor or pipeline parallelism, rung 4's advice
# (the smallest N <= 4, a smaller model of the family), --solve, and the
# other new keys (overlap_bytes, kv_cache_per_token_bytes, warnings).
. "$(dirname "$0")/lib.sh"
P="$NODRV $SPARKOPS $(sysroot no-gpu) plan"

# --- one node: the per-node figures are the single-node ones ---------------------------
run $P llama-3.1-8b --method lora --budget 100GiB --json
expect_rc 0 "8B LoRA on one node"
expect_jq '.nodes == 1 and .strategy == "none"' "one node, no strategy"
expect_jq '.per_node_peak_bytes == .peak_bytes and .per_node_load_peak_bytes == .load_peak_bytes' "per-node peaks = the peaks"
expect_jq '.terms_per_node == .terms' "per-node terms = the terms"
expect_jq '.link.bytes_per_step == 0 and .link.gbps == 200 and .link.per == "optimizer_step"' "no link traffic on one node"
expect_jq '.solve == null and .warnings == []' "no solve asked, no warning"

# --- FSDP over two: sharded state, gathered layers, 3x the parameter bytes on the link ---
run $P llama-3.1-70b --method full --nodes 2 --strategy fsdp --budget 1TiB --json
expect_rc 0 "70B full over two Sparks within 1 TiB a node"
expect_jq '.nodes == 2 and .strategy == "fsdp"' "nodes and strategy in the JSON"
expect_jq '.terms_per_node.weights * 2 == .terms.weights and .terms_per_node.gradients * 2 == .terms.gradients and .terms_per_node.optimizer * 2 == .terms.optimizer' "weights, gradients, optimizer halved"
expect_jq '.terms_per_node.activations == .terms.activations and .terms_per_node.logits == .terms.logits' "activations and logits per node unchanged"
expect_jq '.terms.comm_buffers == 0 and .terms_per_node.comm_buffers > 0' "FSDP adds the all-gather buffers"
# two layers of Llama 3.1 70B at 16 bits: 2 x (70553706496 - 2 x 128256 x 8192 - 161 x 8192) / 80 x 2
expect_jq '(.terms_per_node.comm_buffers - 3422552064 | fabs) < 4096' "all-gather buffers: two layers' 16-bit weights"
expect_jq '(.link.bytes_per_step - (2 * .terms.weights + .terms.gradients) / 2 | fabs) < 1' "link: (2 x weights + gradients) x (N-1)/N"
expect_jq '(.link.seconds_per_step - .link.bytes_per_step * 8 / 200e9 | fabs) < 1e-9' "link seconds at 200 Gb/s"
expect_jq '.per_node_peak_bytes < .peak_bytes * 0.6' "FSDP roughly halves the peak"
expect_jq '.need_bytes == ([.per_node_peak_bytes, .per_node_load_peak_bytes] | max)' "the verdict judges one node"

run $P llama-3.1-70b --method full --nodes 4 --link-gbps 400 --budget 1TiB --json
expect_jq '.strategy == "fsdp"' "training defaults to fsdp"
expect_jq '(.link.bytes_per_step - (2 * .terms.weights + .terms.gradients) * 3 / 4 | fabs) < 1 and .link.gbps == 400' "(N-1)/N at four nodes, --link-gbps"

# --- DDP: saves nothing, says so ------------------------------------------------------------
run $P llama-3.1-8b --method full --nodes 2 --strategy ddp --budget 1TiB --json
expect_jq '.per_node_peak_bytes == .peak_bytes and .terms_per_node == .terms' "DDP: the single-node footprint on every node"
expect_jq '(.link.bytes_per_step - 2 * .terms.gradients / 2 | fabs) < 1' "DDP link: 2 x gradients x (N-1)/N"
run $P llama-3.1-8b --method full --nodes 2 --strategy ddp --budget 1TiB
expect_out 'DDP saves no memory' "human: DDP says plainly it saves no memory"
expect_out 'link: each node sends' "human: the link line"

# --- serving: TP and PP -------------------------------------------------------------------
run $P llama-3.1-70b --method infer --seq 32768 --nodes 2 --budget 1TiB --json
expect_jq '.strategy == "tp" and .link.per == "decode_step"' "serving defaults to tp, link per decode step"
expect_jq '.terms_per_node.kv_cache == 5368709120 and .terms.kv_cache == 10737418240' "TP: 10 GiB of KV at 32k split in two"
expect_jq '.terms_per_node.weights * 2 == .terms.weights' "TP: weights split"
expect_jq '.terms_per_node.comm_buffers == 2 * 32768 * 8192 * 2' "TP: all-reduce buffers"
expect_jq '.kv_cache_per_token_bytes == 327680' "KV per token: 80 x 8 x 128 x 2 x 2 bytes"
run $P llama-3.1-70b --method infer --seq 32768 --nodes 2 --strategy pp --budget 1TiB --json
expect_jq '.strategy == "pp" and .terms_per_node.kv_cache == 5368709120 and .link.bytes_per_step == 16384' "PP: layers split, one hand-off of h x 2 bytes"

# --- refusals ---------------------------------------------------------------------------------
run $P llama-3.1-8b --method lora --nodes 2 --strategy tp --budget 100GiB --json
expect_rc 2 "training over tensor parallelism is refused"
expect_err 'never tensor parallelism over the link' "the reason is given"
run $P llama-3.1-8b --method full --nodes 2 --strategy pp --budget 100GiB
expect_rc 2 "training over pipeline parallelism is refused"
run $P llama-3.1-8b --method infer --nodes 2 --strategy fsdp --budget 100GiB
expect_rc 2 "serving over fsdp is refused"
run $P llama-3.1-8b --strategy mesh --budget 100GiB
expect_rc 2 "an unknown strategy"
run $P llama-3.1-8b --nodes 0 --budget 100GiB
expect_rc 2 "--nodes 0"
run $P llama-3.1-8b --nodes 2 --link-gbps -5 --budget 100GiB
expect_rc 2 "a negative link speed"

# --- rung 4: more Sparks and a smaller model ------------------------------------------------
run $P llama-3.1-70b --method qlora --budget 30GiB --json
expect_rc 1 "70B QLoRA does not fit 30 GiB"
expect_jq '.advice[0].rung == "model"' "rung 4 after every change on one node"
expect_jq '[.advice[] | select(.rung == "nodes")][0] | .flags == "--nodes 4 --strategy fsdp" and .need_bytes <= 32212254720' "the smallest N that fits, with its per-node need"
expect_jq '[.advice[] | select(.rung == "smaller_model")][0] | .flags == "llama-3.1-8b" and .need_bytes <= 32212254720' "a smaller model of the same family that fits one node"
run $P llama-3.1-70b --method qlora --budget 10GiB --json
expect_jq '[.advice[] | select(.rung == "nodes")][0] | .need_bytes == null and (.why | test("no N <= 4"))' "or: no N <= 4 fits"

# --- serving advice: cheapest first --------------------------------------------------------------
run $P llama-3.1-70b --method infer --seq 131072 --batch 8 --budget 100GiB --json
expect_jq '.advice[0].rung == "quant" and (.advice[0].flags | test("^--quant int8 --seq [0-9]+$"))' "a quantized base with a shorter context, before another node"

# --- --solve ------------------------------------------------------------------------------------
run $P llama-3.1-8b --method qlora --budget 40GiB --solve seq --json
expect_jq '.solve.what == "seq" and .solve.max_seq % 64 == 0 and .solve.max_seq > 2048' "the largest packing, a multiple of 64"
max=$(jq .solve.max_seq "$OUT")
run $P llama-3.1-8b --method qlora --budget 40GiB --seq "$max" --json
expect_jq '.verdict == "fits"' "at the solved packing the plan fits"
run $P llama-3.1-8b --method qlora --budget 40GiB --seq "$((max + 64))" --json
expect_jq '.verdict != "fits"' "64 tokens more does not"
run $P llama-3.1-8b --method lora --budget 60GiB --solve batch --json
expect_jq '.solve.max_batch >= 1 and .solve.need_bytes <= 64424509440' "the largest micro-batch"
run $P llama-3.1-8b --method lora --budget 60GiB --solve batch
expect_out '^solve: the largest micro-batch' "human: the solve line"
run $P llama-3.1-8b --method lora --budget 4GiB --solve seq --json
expect_jq '.solve.max_seq == null' "nothing fits: null"
run $P llama-3.1-8b --solve width --budget 4GiB
expect_rc 2 "--solve takes seq or batch"

# --- the accounting's new knobs -----------------------------------------------------------------
run $P llama-3.2-3b --method full --no-grad-ckpt --batch 4 --seq 768 --budget 1TiB --json
expect_jq '.overlap_bytes == .terms.gradients * 2 and .peak_bytes == ([.terms[]] | add) - .overlap_bytes' "full fine-tuning: gradients and foreach AdamW's copy of one bf16 state never live with every activation"
run $P llama-3.1-8b --method qlora --no-double-quant --budget 1TiB --json
expect_jq '.settings.double_quant == false' "--no-double-quant in the settings"
a=$(jq .terms.weights "$OUT")
run $P llama-3.1-8b --method qlora --budget 1TiB --json
b=$(jq .terms.weights "$OUT")
[ "$a" -gt "$b" ]
_report $? "4.5 bits without double quantization weigh more than 4.127"
run $P llama-3.1-8b --method qlora --lora-targets q,v --no-grad-ckpt --batch 1 --seq 1024 --budget 1TiB --json
a=$(jq .terms.activations "$OUT")
run $P llama-3.1-8b --method qlora --lora-targets q,v --no-grad-ckpt --batch 1 --seq 1024 --bnb-legacy --budget 1TiB --json
expect_jq '.settings.bnb_legacy' "--bnb-legacy in the settings"
b=$(jq .terms.activations "$OUT")
[ $((b - a)) -eq $((32 * 1024 * (2 * 4096 + 2 * 4096 + 2 * 14336))) ]
_report $? "--bnb-legacy: o, the MLP input and down keep their 16-bit inputs ($((b - a)) bytes more)"
run $P llama-2-7b --method qlora --lora-targets q,v --no-grad-ckpt --bnb-legacy --seq 4096 --uma no --budget 30GiB --json
expect_jq '.verdict == "no" and .advice[0].rung == "bitsandbytes" and (.advice[0].flags | test("bitsandbytes>=0.43.2"))' "--bnb-legacy: a current bitsandbytes is the first rung when it is enough"
run $P llama-2-7b --method qlora --lora-targets q,v --no-grad-ckpt --bnb-legacy --seq 4096 --uma no --budget 24GiB --json
expect_jq '.advice[0].rung == "seq"' "and not when it is not"
run $P llama-3.1-8b --method lora --bnb-legacy --budget 1TiB
expect_rc 2 "--bnb-legacy without a 4-bit base is refused"
expect_err 'bnb-legacy' "and says which option"
run $P llama-3.1-8b --method lora --no-grad-ckpt --batch 1 --seq 1024 --budget 1TiB --json
a=$(jq .terms.activations "$OUT")
run $P llama-3.1-8b --method lora --no-grad-ckpt --batch 1 --seq 1024 --attn math --budget 1TiB --json
expect_jq '.settings.attn == "math"' "--attn math in the settings"
b=$(jq .terms.activations "$OUT")
[ $((b - a)) -eq $((32 * 2 * 32 * 1024 * 1024)) ]
_report $? "--attn math: the 16-bit softmax output, 2 bytes a score ($((b - a)) bytes more)"
run $P llama-3.1-8b --method lora --loss bf16 --budget 1TiB --json
expect_jq '.settings.loss == "bf16" and .terms.logits == 2048 * 128256 * 6' "--loss bf16: 6 bytes per logit"
run $P llama-3.1-8b --method lora --offload-activations --budget 1TiB --json
expect_jq '.settings.offload_activations and .terms.activations_offloaded == 32 * 2 * 2048 * 4096' "--offload-activations: the checkpoints on the host side"
printf '{"model_type":"zorblax","hidden_size":64,"intermediate_size":128,"num_hidden_layers":2,"num_attention_heads":4,"vocab_size":100}' >"$TMP/config.json"
run $P --config "$TMP/config.json" --budget 1TiB --json
expect_jq '.warnings[0] | test("zorblax.*read as Llama")' "an unknown architecture names the assumption"
run $P --config "$TMP/config.json" --budget 1TiB
expect_out '^warning: .*zorblax' "human: the warning"
done_testing
