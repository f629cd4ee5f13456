#!/bin/sh
# SPDX-License-Identifier: MIT
# A server's rung 2 uses the figures its own log printed: llama.cpp's model
# file (for -m) and its context (n_ctx, or -c on its command line) halved;
# TGI's prefill batch (max_batch_prefill_tokens, "handle N prefill tokens")
# halved in the example, never a fixed number.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
L="$FIX/oomlogs"
R=$(sysroot gb10-idle)
XDG_STATE_HOME="$TMP/state"
export XDG_STATE_HOME
adv() { # LOG JOB: rung 2's advice (rung 1 marked tried)
	$S ladder --log "$1" $R --tried 1 --job "$2" --json | jq -r '.advice'
}
run adv "$L/llamacpp_kv_cache.log" kv
expect_out '\(1\) -c 65536 ' "llama.cpp: its n_ctx = 131072, halved"
expect_out 'llama-server -m /models/[^ ]+\.gguf -c 65536' "llama.cpp: the example names the model file it loaded"
expect_no_out '-m (Qwen|Meta) ' "not the GGUF's display name as a path"
run adv "$L/llamacpp_load.log" load
expect_out '\(1\) -c 4096 ' "llama.cpp: -c 8192 on its command line, halved"
expect_out 'llama-server -m /models/Meta-Llama-3\.1-70B-Instruct-Q8_0\.gguf -c 4096' "llama.cpp: -m from its command line"
run adv "$L/tgi_prefill_warmup.log" tgi
expect_out '\(1\) --max-batch-prefill-tokens 2048 \(half the 4096' "TGI: half the prefill batch its warm-up allocated"
expect_out 'text-generation-launcher --model-id meta-llama/Llama-2-70b-chat-hf --max-batch-prefill-tokens 2048' \
	"TGI: the example goes from its own figure"
# a TGI log with a bigger batch: the example follows it, it is not a fixed 2048
sed 's/4096 prefill tokens/16384 prefill tokens/g; s/max_batch_prefill_tokens: 4096/max_batch_prefill_tokens: 16384/; s/max_prefill_tokens=4096/max_prefill_tokens=16384/' \
	"$L/tgi_prefill_warmup.log" >"$TMP/tgi16k.log"
run adv "$TMP/tgi16k.log" tgi16k
expect_out '--max-batch-prefill-tokens 8192 \(half the 16384' "TGI: 16384 gives 8192, not 2048"

# ladder --plan with a server's log plans the context its own advice names,
# not a halving of --plan's --seq
run $S ladder --log "$L/vllm_v1_kv_maxlen.log" $R --tried 1 --job plan1 --plan 'qwen2.5-7b --method infer --seq 131072' --json
adv=$(jq -r '.max_model_len_advised' "$OUT")
expect_jq ".plan.steps[0].change == \"--seq $adv\"" "the planner checks --seq $adv, the --max-model-len the advice names"
expect_jq '.change | test("--max-model-len '"$adv"'")' "and the advice names the same figure"
done_testing
