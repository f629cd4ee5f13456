#!/bin/sh
# SPDX-License-Identifier: MIT
# plan's generate phases (--prompt, --kv-cache), the counter a figure is
# read from (--measure), fused-QKV LoRA targets and --quant-lm-head
# (docs/plan.md: "generate's two phases", "What a figure counts").
. "$(dirname "$0")/lib.sh"
S="$SPARKOPS --procfs $FIX/no-gpu/proc"
C13="$(cd "$(dirname "$0")/../.." && pwd)/tests/fixtures/accuracy/llama-2-13b.json"
Q7="$(cd "$(dirname "$0")/../.." && pwd)/tests/fixtures/accuracy/qwen-7b.json"
P="--uma no --budget 1TiB --json"
kvt=$((40 * 5120 * 2 * 2)) # Llama-2-13B fp16: bytes of one token's K and V

# the default: the whole context is prompt, the cache once (as before)
run $S plan --config "$C13" --method infer --dtype fp16 --batch 16 --seq 1024 $P
expect_jq ".terms.kv_cache == $kvt * 1024 * 16 and .settings.kv_cache == \"dynamic\" and .settings.prompt == 1024" \
	"default: dynamic cache, prompt = the whole --seq, the cache counted once"

# legacy: the last decode step holds the old tuple and the new one
run $S plan --config "$C13" --method infer --dtype fp16 --kv-cache legacy --prompt 512 --batch 16 --seq 1024 $P
expect_jq ".terms.kv_cache == $kvt * 1024 * 16 and .terms.activations >= $kvt * 1023 * 16" \
	"legacy: the old cache (seq - 1 tokens) alive beside the new one"
legact=$(jq .terms.activations "$OUT")

# dynamic: one layer's cache more at the last step, not the whole cache
run $S plan --config "$C13" --method infer --dtype fp16 --kv-cache dynamic --prompt 512 --batch 16 --seq 1024 $P
expect_jq ".terms.activations == $kvt * 1024 * 16 / 40 + 16 * 4 * 5120" "dynamic: one layer's cache (of 40) and the step's input"
dynact=$(jq .terms.activations "$OUT")
[ $((legact - dynact)) = $((kvt * 1023 * 16 - kvt * 1024 * 16 / 40)) ]
_report $? "legacy holds the old cache where dynamic holds one layer's ($legact vs $dynact)"

# static: allocated whole in the prefill, so the prompt's working set meets the full cache
run $S plan --config "$C13" --method infer --dtype fp16 --kv-cache static --prompt 512 --batch 16 --seq 1024 $P
expect_jq ".terms.kv_cache == $kvt * 1024 * 16 and .terms.activations > $dynact" "static: the full cache already in the prefill"

# a prefill of 512 with no decode step: the legacy cache keeps every position's logits (fp16 + fp32)
run $S plan --config "$C13" --method infer --dtype fp16 --kv-cache legacy --batch 16 --seq 512 $P
expect_jq ".terms.logits == 16 * 512 * 32000 * 6" "legacy prefill: 6 bytes a logit for every position"
run $S plan --config "$C13" --method infer --dtype fp16 --batch 16 --seq 512 $P
expect_jq ".terms.logits == 16 * 32000 * 4" "dynamic prefill: the last position's logits only"

# usage errors
run $S plan --config "$C13" --method infer --prompt 2048 --seq 1024 $P
expect_rc 2 "--prompt longer than --seq"
expect_err 'prompt 2048 is longer than the context' "and says so"
run $S plan --config "$C13" --method lora --prompt 16 $P
expect_rc 2 "--prompt on a training plan"
run $S plan --config "$C13" --method infer --kv-cache paged $P
expect_rc 2 "an unknown --kv-cache"
expect_err "is not static, dynamic or legacy" "names the choices"
run $S plan --config "$C13" --method infer --measure peak $P
expect_rc 2 "an unknown --measure"

# --measure: process is peak_bytes; reserved without the CUDA context; allocated without the slack too
run $S plan --config "$C13" --method lora --seq 1024 $P
peak=$(jq .peak_bytes "$OUT")
ctx=$(jq .terms.cuda_context "$OUT")
slack=$(jq .terms.allocator_slack "$OUT")
expect_jq ".measure_bytes == $peak and .settings.measure == \"process\"" "default --measure process: measure_bytes is peak_bytes"
run $S plan --config "$C13" --method lora --seq 1024 --measure reserved $P
expect_jq ".measure_bytes == $peak - $ctx and .peak_bytes == $peak" "reserved: less the CUDA context; peak_bytes unchanged"
run $S plan --config "$C13" --method lora --seq 1024 --measure allocated $P
expect_jq ".measure_bytes == $peak - $ctx - $slack" "allocated: less the context and the allocator's slack"

# fused QKV: one adapter of r x (h + 3h) a layer, not three of r x 2h
run $S plan --config "$Q7" --method lora --lora-rank 64 --lora-targets c_attn $P
expect_jq ".trainable_params == 32 * 64 * (4096 + 3 * 4096)" "c_attn: r x (h + q + 2kv) a layer"
run $S plan --config "$Q7" --method lora --lora-rank 64 --lora-targets q,k,v $P
expect_jq ".trainable_params == 32 * 64 * 6 * 4096" "q,k,v apart: r x 2h each"
run $S plan --config "$Q7" --method lora --lora-rank 8 --lora-targets c_proj $P
expect_jq ".trainable_params == 32 * 8 * (4096 + 4096 + 11008 + 4096) and .settings.lora_targets == \"o,down\"" \
	"c_proj: the attention output and the MLP's down projection"
for n in qkv_proj Wqkv query_key_value; do
	run $S plan --config "$Q7" --method lora --lora-rank 64 --lora-targets "$n" $P
	expect_jq ".trainable_params == 32 * 64 * (4096 + 3 * 4096)" "$n is a fused q,k,v"
done

# --quant-lm-head: the head in 4 bits, and the widest dequantization is the head's
run $S plan llama-2-7b --method qlora $P
w0=$(jq .terms.weights "$OUT")
d0=$(jq .terms.dequant_buffers "$OUT")
run $S plan llama-2-7b --method qlora --quant-lm-head $P
expect_jq ".terms.weights < $w0 and .terms.dequant_buffers == 2 * 32000 * 4096 * 2 and .terms.dequant_buffers > $d0 and .settings.quant_lm_head" \
	"--quant-lm-head: fewer weight bytes, the head's dequantization buffer"
run $S plan llama-2-7b --method lora --quant-lm-head $P
expect_rc 2 "--quant-lm-head needs a quantized base"
done_testing
