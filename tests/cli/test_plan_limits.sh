#!/bin/sh
# SPDX-License-Identifier: MIT
# The planner's arithmetic cannot wrap into a false "fits": a job past any
# machine says no and names the term; a config of huge numbers prints real
# numbers, never a wrapped negative.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS

run $S plan llama-3.1-8b --method full --no-grad-ckpt --attn eager --framework unsloth --batch 512 --seq 16777216 --budget 100GiB
expect_rc 1 "16M tokens x 512 on an 8B full fine-tune does not fit"
expect_out '^verdict: no' "the verdict is no"
expect_out 'why: the activations term is beyond any machine' "the saturated term is named"
expect_no_out 'verdict: fits' "never 'fits'"

run $S plan llama-3.1-8b --method full --no-grad-ckpt --attn eager --framework unsloth --batch 512 --seq 16777216 --budget 100GiB --json
expect_jq '.verdict == "no" and .saturated_term == "activations"' "JSON: verdict no, saturated_term"
expect_jq '.peak_bytes >= ([.terms[]? | .bytes? // . | numbers] | max // 0)' "the peak is not below any term"

cat >"$TMP/huge.json" <<'JSON'
{"model_type": "llama", "hidden_size": 100000000, "num_hidden_layers": 100000,
 "num_attention_heads": 100000000, "num_key_value_heads": 100000000,
 "intermediate_size": 100000000, "vocab_size": 100000000}
JSON
run $S plan "$TMP/huge.json" --budget 100GiB --json
expect_rc 1 "a config of huge numbers does not fit"
expect_jq '.params > 1e18' "params is a real (large) number, not a wrapped negative"
expect_jq '.saturated_term != null' "and the saturated term is named"

run $S plan llama-3.1-8b --method lora --budget 100GiB --json
expect_jq '.saturated_term == null' "an ordinary plan saturates nothing"
done_testing
