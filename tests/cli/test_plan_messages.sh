#!/bin/sh
# SPDX-License-Identifier: MIT
# plan says its slips: caps past the pool over-commit (no percentage of a zero
# budget); catalog names, aliases and --quant on pre-quantized weights.
# LoRA: the targets listed are the ones the trainable count counts.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS

# --- caps past the pool are said; no made-up percentage of a zero budget --------------------
run $NODRV $S plan llama-3.1-8b --method lora --cohost vllm:0.95 --cohost vllm:0.2 $(sysroot gb10-idle)
expect_out 'OVER-COMMITTED: .*115% of the' "vllm 0.95 + 0.2 is said to over-commit the pool"
expect_no_out '200%' "no '200%' of a 0.0 GiB budget"
expect_out 'over: the budget is 0' "the bars say the budget is 0"
run $NODRV $S plan llama-3.1-8b --method lora --cohost vllm:0.95 --cohost vllm:0.2 --json $(sysroot gb10-idle)
expect_jq '.cohosts_overcommitted == true' "JSON: cohosts_overcommitted"

# --- catalog and anchor slips are said -------------------------------------------------------
P="$NODRV $S $(sysroot no-gpu) plan"
run $P llama-3-70b-instruct --budget 100GiB
expect_rc 2 "an unknown name is refused"
expect_err "nearest catalog names: llama-3\.1-70b" "with the nearest names offered"
run $P llama-3-8b --budget 100GiB
expect_err "'llama-3-8b' is planned as the catalog's llama-3\.1-8b" "an alias naming another release is said"
run $P gpt-oss-120b --method infer --quant none --budget 200GiB
expect_err -- "--quant none does not apply: gpt-oss-120b is stored pre-quantized" "--quant on pre-quantized weights is said, not ignored"
expect_no_out 'grad-ckpt|adamw' "the infer plan has no grad-ckpt or optimizer"
expect_no_out 'saved for backward' "nor activations saved for backward"

# --- plan's LoRA targets are the ones the trainable count counts ------------------
run $NODRV $S plan gpt-oss-20b --method lora $(sysroot gb10-idle)
expect_out 'LoRA r=16 on q,k,v,o \(gate,up,down: .*not counted\)' "gpt-oss: the header lists the attention targets it counts, and says why the MLP ones are not"
expect_no_out 'on q,k,v,o,gate,up,down' "not 'on q..down' next to an attention-only count"
run $NODRV $S plan gpt-oss-20b --method lora --json $(sysroot gb10-idle)
expect_jq '.settings.lora_targets_counted == "q,k,v,o"' "JSON: lora_targets_counted"
run $NODRV $S plan llama-3.1-8b --method lora $(sysroot gb10-idle)
expect_out 'LoRA r=16 on q,k,v,o,gate,up,down$' "a dense model still lists all seven"

done_testing
