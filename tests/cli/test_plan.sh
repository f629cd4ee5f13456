#!/bin/sh
# SPDX-License-Identifier: MIT
# sparkops plan: terms, peaks, verdicts, exit codes, advice and bad input.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
P="$NODRV $S $(sysroot no-gpu) plan"

run $S plan --help
expect_rc 0 "plan --help"
expect_out -- '--cohost SPEC' "help lists --cohost"
run $S --help
expect_out 'plan ' "plan is in the command list"

# --- bare parameter counts against --budget ---------------------------------------
run $P --params 8e9 --method lora --budget 100GiB --json
expect_rc 0 "8B LoRA in 100 GiB fits"
expect_jq '.verdict == "fits"' "verdict fits"
expect_jq '.params == 8000000000 and .model.params_estimated == true' "params as given, shape estimated"
expect_jq '.terms.weights == 16000000000' "bf16 weights 2 B/param"
expect_jq '.trainable_params > 4e7 and .trainable_params < 4.4e7' "LoRA r=16 on all linear layers ~0.5%"
expect_jq '.terms.adapter == .trainable_params*4 and .terms.optimizer == .trainable_params*12' "fp32 adapter and AdamW states, and the foreach step's copy of one"
expect_jq '([.terms[]] | add) - .overlap_bytes == .peak_bytes and .overlap_bytes == .terms.gradients + .trainable_params*4' "on UMA the peak is the sum of every term less the step phase (gradients, the step's copy), never live with the activations"
expect_jq '.peak_bytes == .device_bytes + .host_bytes and .uma == true' "UMA: device + host"
expect_jq '.load_mapped_bytes == 4000000000 and .load_file_bytes == 16000000000' "the load maps one of four <= 5 GB shards of a 16 GB checkpoint at a time"
expect_jq '.load_peak_bytes == .terms.weights + .terms.cuda_context + .load_mapped_bytes + .terms.host_process' "load peak: the copy + the mapped shard + the process"
expect_jq '.budget_bytes == 107374182400 and .budget_source == "--budget"' "--budget is the budget"
expect_jq '.anchor == null' "no anchor of this method and size class (none is shown out of class)"
expect_jq '.advice == []' "no advice when it fits"
expect_jq '(.terms | keys) == (["activations","activations_offloaded","adapter","allocator_slack","cuda_context","dequant_buffers","gradients","host_process","kbit_upcast","kv_cache","logits","master_weights","optimizer","weights","comm_buffers"] | sort)' "the terms object has every named term"

run $P --params 8e9 --method lora --budget 100GiB
expect_rc 0 "human output"
expect_out '^TERMS' "human: the terms table"
expect_out 'weights +14\.9 GiB +device' "human: weights in GiB, device side"
expect_out 'host_process +3\.0 GiB +host' "human: the host side"
expect_out '^  steady +\[#' "human: a bar for the steady peak"
expect_out '^  load +\[#' "human: a bar for the load peak"
expect_out '^verdict: fits' "human: the verdict"

run $P --params 70e9 --method lora --budget 100GiB --json
expect_rc 1 "70B bf16 LoRA on 100 GiB does not fit: exit 1"
expect_jq '.verdict == "no"' "verdict no"
expect_jq '.advice[0].rung == "method" and (.advice[0].flags | startswith("--method qlora"))' "advice: QLoRA"
expect_jq '.advice[0].need_bytes <= .budget_bytes' "the advice fits the budget"

run $P --params 70e9 --method qlora --budget 100GiB --framework unsloth --json
expect_rc 0 "70B QLoRA fits 100 GiB"
expect_jq '.anchor.name == "70b-qlora" and .anchor.far == false' "70B QLoRA agrees with its anchor"
expect_jq '.terms.weights > 36e9 and .terms.weights < 42e9' "70B NF4 weights ~39 GB"
expect_jq '.terms.activations_offloaded > 0' "Unsloth offloads checkpoints (host side)"
run $P --params 70e9 --method lora --quant none --budget 400GiB --json
expect_jq '.anchor == null' "70B bf16 LoRA: the 70B QLoRA anchor is another method, not shown"

# ladder order: shorter packing first, never batch first
run $P --params 8e9 --method qlora --budget 30GiB --seq 16384 --batch 2 --json
expect_rc 1 "long packing does not fit"
expect_jq '.advice[0].rung == "seq" and (.advice[0].flags | test("^--seq [0-9]+$"))' "advice: shorter --seq first"
run $P --params 8e9 --method qlora --budget 24GiB --seq 256 --batch 32 --json
expect_jq '.advice[0].rung == "batch" and (.advice[0].why | test("gradient_accumulation_steps"))' "then a smaller batch, accumulation keeps the effective batch"
run $P --params 8e9 --method full --budget 60GiB --seq 256 --json
expect_jq '.advice[0].rung == "optim" and (.advice[0].flags | test("--optim adamw8bit"))' "then a leaner optimizer"
run $P --params 8e9 --method full --budget 40GiB --json
expect_jq '.advice[0].rung == "method" and (.advice[0].flags | startswith("--method lora"))' "bf16 LoRA before QLoRA"
run $P --params 400e9 --method qlora --budget 100GiB --json
expect_jq '.advice[0].rung == "model" and (.advice[0].flags | test("more Sparks"))' "last: a smaller model or more Sparks"

# tight
run $P --params 8e9 --method qlora --budget 18GiB --json
expect_rc 0 "tight still exits 0"
expect_jq '.verdict == "tight" and .need_bytes <= .budget_bytes and .budget_bytes - .need_bytes < .tight_margin_bytes' "tight: inside the margin"

# every option is accepted
run $P --params 8e9 --method full --dtype fp32 --optim sgd --batch 2 --seq 512 --no-grad-ckpt --attn eager --master-weights --budget 500GiB --json
expect_jq '.settings.dtype == "fp32" and .settings.optim == "sgd" and .terms.optimizer == 0 and .terms.weights == 32000000000' "full fp32 with SGD (no momentum)"
expect_jq '.settings.grad_ckpt == false and .settings.attn == "eager"' "--no-grad-ckpt and --attn eager"
run $P --params 8e9 --method qlora --quant fp4 --lora-rank 8 --lora-targets q,v --optim paged_adamw8bit --framework torchtune --budget 50GiB --json
expect_jq '.settings.quant == "fp4" and .settings.lora_targets == "q,v" and .settings.lora_rank == 8 and .settings.framework == "torchtune"' "quant, rank, targets, framework"
run $P --params 8e9 --method infer --seq 32768 --batch 4 --budget 100GiB --json
expect_jq '.trainable_params == 0 and .terms.kv_cache > 0 and .terms.gradients == 0' "infer: KV cache, nothing trained"
run $P --params 8e9 --method infer --quant nf4 --budget 100GiB --json
expect_jq '.terms.weights < 6e9 and .terms.dequant_buffers > 0' "infer with a 4-bit base"

# co-hosted servers
run $P --params 8e9 --method qlora --budget 100GiB --cohost vllm:0.5 --json
expect_jq '.budget_bytes == 53687091200 and .cohosts[0].server == "vllm" and .cohosts[0].bytes == 53687091200' "vllm:0.5 keeps half the pool"
run $P --params 8e9 --method qlora --budget 100GiB --cohost vllm:0.5 --cohost ollama:10GiB --json
expect_jq '.budget_bytes == 42949672960 and (.cohosts | length) == 2' "--cohost is repeatable"
run $P --params 8e9 --method qlora --seq 512 --budget 30GiB --cohost vllm:0.6 --json
expect_rc 1 "a co-hosted vLLM at 0.6 leaves too little"
expect_jq '.advice[0].rung == "cohost"' "advice: the co-hosted server before the job's own settings"
printf 'GGUF' > "$TMP/m.gguf"
truncate -s 5000000000 "$TMP/m.gguf"
run $P --params 8e9 --method qlora --budget 100GiB --cohost "ollama:$TMP/m.gguf" --json
expect_jq '.cohosts[0].bytes == 5000000000 and .budget_bytes == 107374182400 - 5000000000' "ollama:FILE.gguf counts the file"
run $P --params 8e9 --budget 100GiB --cohost "ollama:$TMP/missing.gguf"
expect_rc 2 "a missing gguf"
expect_err "missing.gguf" "the missing gguf is named"
for bad in vllm vllm: vllm:0 vllm:1.5 vllm:x ollama:lots sglang:0.5 ':0.5'; do
	run $P --params 8e9 --budget 100GiB --cohost "$bad"
	expect_rc 2 "bad --cohost '$bad'"
done

# --- live budgets from fixtures ----------------------------------------------------
run $GB10 $S $(sysroot gb10-idle) plan --params 8e9 --method qlora --json
expect_rc 0 "GB10 idle: 8B QLoRA fits"
expect_jq '.uma == true and .uma_source == "detected from the GPU" and .budget_source == "live"' "GB10 detected as UMA"
run $GB10 $S $(sysroot gb10-idle) status --json
want=$(jq .budget.now_bytes "$OUT")
run $GB10 $S $(sysroot gb10-idle) plan --params 8e9 --method qlora --json
expect_jq ".budget_bytes == $want" "the live budget is status's budget.now"
run $GB10 $S $(sysroot gb10-idle) plan --params 8e9 --method qlora --reserve 1GiB --json
expect_jq ".budget_bytes == $want + 3221225472" "--reserve moves the live budget"
run $GB10 $S $(sysroot gb10-loaded) plan --params 8e9 --method qlora --json
expect_rc 1 "GB10 loaded: does not fit now"
expect_jq '.advice[0].rung == "flush"' "first advice: flush the page cache"
run $GB10 $S $(sysroot gb10-loaded) plan --params 8e9 --method qlora
expect_out 'advice: flush the page cache' "human: flush advice"
run $DISC $S $(sysroot discrete) plan --params 8e9 --method qlora --json
expect_jq '.uma == false and .budget_bytes == 60000000000 and .peak_bytes == .device_bytes' "discrete: the device side against the GPU's free memory"
expect_jq '.host_budget_bytes > 0' "discrete: the host side against system memory"
run $DISC $S $(sysroot discrete) plan --params 8e9 --method qlora --uma yes --json
expect_jq '.uma == true and .uma_source == "--uma" and .peak_bytes == .device_bytes + .host_bytes' "--uma yes overrides detection"
run $GB10 $S $(sysroot gb10-idle) plan --params 8e9 --uma no --json
expect_rc 2 "--uma no on a GPU without memory info needs --budget"
run $P --params 8e9 --method qlora --json
expect_jq '.uma_source | test("no GPU")' "no GPU: planned against system memory"
run $NODRV $S plan --procfs /nonexistent --params 8e9
expect_rc 2 "unreadable meminfo without --budget"
expect_err "use --budget" "unreadable meminfo says what to do"

# --- bad input -----------------------------------------------------------------------
run $P --budget 100GiB
expect_rc 2 "no model"
expect_err "which model" "no model is explained"
run $P --params 8e9 --config x.json --budget 100GiB
expect_rc 2 "two models"
run $P --params lots
expect_rc 2 "bad --params"
expect_err "--params: 'lots' is not a parameter count" "bad --params is explained"
run $P --params 8e9 --method dpo
expect_rc 2 "bad --method"
run $P --params 8e9 --dtype int3
expect_rc 2 "bad --dtype"
run $P --params 8e9 --quant q2
expect_rc 2 "bad --quant"
run $P --params 8e9 --optim lion
expect_rc 2 "bad --optim"
run $P --params 8e9 --framework axolotl
expect_rc 2 "bad --framework"
run $P --params 8e9 --batch 0
expect_rc 2 "--batch 0"
run $P --params 8e9 --seq 12x
expect_rc 2 "bad --seq"
run $P --params 8e9 --lora-rank -1
expect_rc 2 "bad --lora-rank"
run $P --params 8e9 --lora-targets q,lm_head
expect_rc 2 "bad --lora-targets"
run $P --params 8e9 --budget lots
expect_rc 2 "bad --budget"
run $P --params 8e9 --uma maybe
expect_rc 2 "bad --uma"
run $P --params 8e9 --attn paged
expect_rc 2 "bad --attn"
run $P --params 8e9 --method qlora --quant none
expect_rc 2 "qlora with --quant none contradicts"
run $P --params 8e9 --method full --quant nf4
expect_rc 2 "full fine-tuning of a 4-bit base contradicts"
run $P --params 8e9 --budget 100GiB extra
expect_rc 2 "two positional models"


# --- real model inputs (the readers) -------------------------------------------------
M="$FIX/models"
run $P "$M/tiny-llama" --budget 100GiB --json
expect_rc 0 "a model folder (config.json + 2 safetensors shards)"
expect_jq '.model.source == "folder" and .params == 26784' "params counted from the tensors"
expect_jq '.load_file_bytes == 53568 and .load_mapped_bytes == 53568' "the real tensor bytes; under 5 GB the checkpoint is mapped whole"
expect_jq '.model.weight_bytes == 53568 and .model.files_read >= 3 and .model.bytes_read < 8192' "headers only: a few KiB read"
run $P "$M/tiny-bnb4" --budget 100GiB --json
expect_jq '.terms.weights == .load_file_bytes and .terms.weights < 2*.params' "a pre-quantized (bnb 4-bit) folder: weights as stored"
run $P "$M/llama-3.1-70b" --method qlora --framework unsloth --budget 119GiB --json
expect_rc 0 "70B QLoRA from a config-only folder fits a Spark"
expect_jq '.params == 70553706496 and .anchor.name == "70b-qlora" and .anchor.far == false' "70B: exact params, the QLoRA anchor agrees"
run $P --config "$M/llama-3.1-8b/config.json" --method lora --lora-rank 16 --budget 100GiB --json
expect_jq '.model.source == "config" and .params == 8030261248 and .trainable_params == 41943040' "--config: Llama-3.1-8B, r=16 all linear = 41,943,040"
run $P llama-2-7b --lora-rank 8 --lora-targets q_proj,v_proj --budget 100GiB --json
expect_jq '.model.source == "catalog" and .trainable_params == 4194304' "catalog name: PEFT's 4,194,304 trainable for Llama-2-7b r=8 q,v"
run $P gpt-oss-120b --method lora --budget 119GiB --json
expect_jq '.anchor.name == "gpt-oss-120b-lora" and .anchor.far == false' "gpt-oss-120b LoRA agrees with its ~68 GB anchor"
expect_jq '.terms.weights > 60e9 and .terms.weights < 70e9' "gpt-oss-120b: MXFP4 experts, ~65 GB of weights"
run $P gemma-3-27b --method lora --seq 1024 --budget 119GiB --json
expect_jq '.anchor.name == "27b-lora" and .verdict != "no"' "27B LoRA fits at packing 1024, as its anchor says"
run $P "$M/gguf/tiny-llama-q4_k_m.gguf" --method infer --budget 10GiB --json
expect_rc 0 "a GGUF file"
expect_jq '.model.source == "gguf" and .terms.weights == .model.weight_bytes and .terms.weights < .params' "GGUF: Q4_K weights as stored"
expect_jq '.load_mapped_bytes == .load_file_bytes' "GGUF: mapped whole (llama.cpp)"
run $P "$M/gguf/truncated.gguf" --budget 10GiB
expect_rc 2 "a truncated GGUF"
expect_err "truncated.gguf" "the truncated GGUF is named"
run $P --list-models
expect_rc 0 "--list-models"
expect_out '^llama-3.1-8b +8\.03B' "the catalog is listed"
run $P --list-models --json
expect_jq 'length > 10 and (map(.name) | index("gpt-oss-120b")) != null' "--list-models --json"
run $P no-such-model --budget 100GiB
expect_rc 2 "an unknown model"
expect_err "no-such-model" "the unknown model is named"
run $P "$M/bad-no-config" --budget 100GiB
expect_rc 2 "a folder without config.json"
expect_err "no config.json" "missing config.json is explained"
run $P "$M/bad-shard" --budget 100GiB
expect_rc 2 "a broken safetensors header"
expect_err "bad-shard/model.safetensors" "the broken shard is named"
run $P "$M/bad-index-missing-shard" --budget 100GiB
expect_rc 2 "an index naming a missing shard"
run $P --config "$M/nonexistent.json" --budget 100GiB
expect_rc 2 "a missing --config file"
expect_err "nonexistent.json" "the missing config is named"

$P --params 8e9 --budget 100GiB | head -1 >/dev/null
RC=$?
expect_rc 0 "plan | head -1"
# option errors name the option, once
run $S plan --methd lora
expect_rc 2 "a misspelt option"
expect_err "unknown option '--methd'" "the misspelt option is named"
run $S plan --batch
expect_rc 2 "an option without its value"
expect_err "option '--batch' needs a value" "the missing value is named"
done_testing
