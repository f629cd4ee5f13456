#!/bin/sh
# SPDX-License-Identifier: MIT
# sparkops ladder over the logs people paste into issue threads, end to end:
# the classifier's kind, phase and engine, then the rungs the advice gives
# for that program (a server's own knobs, the log's numbers, the rungs that
# do not apply and why). The corpus is tests/fixtures/oomlogs (EXPECTED holds
# the classifier's answers; this holds what a user reads).
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
LOGS=$FIX/oomlogs
export XDG_STATE_HOME="$TMP/state"
L="$S ladder $(sysroot gb10-idle)"

# one log: failure phase family next-rung skipped-rungs (jq-style list)
case_of() { # log failure phase family next skipped
	run $L --job "$1" --reset --json --log "$LOGS/$1.log"
	expect_rc 0 "$1: classified"
	expect_jq ".failure == \"$2\" and .phase == \"$3\" and .family == \"$4\" and .next_rung == $5 and ([.skipped[].rung] == $6)" \
		"$1: $2 in $3, $4's rungs, next rung $5, skipped $6"
}
# the change of rung 2 (rung 1 marked tried), in words
change2() { # log pattern name
	run $L --job "$1-2" --reset --tried 1 --log "$LOGS/$1.log"
	expect_out "^  change: .*$2" "$3"
}

# --- vLLM -------------------------------------------------------------------------------------
case_of vllm_v1_kv_maxlen vllm_kv_cache load vllm 2 '[1]'
expect_jq '.max_model_len_advised == 77824' "vLLM's own estimate (77888) rounded down to a multiple of 1024"
expect_jq '.log.engine == "vllm" and .log.max_model_len == 131072 and .log.est_max_model_len == 77888' \
	"the log's lengths under log"
expect_jq '.figures.kv_cache_needed_bytes == 17179869184 and .figures.kv_cache_available_bytes == 10211284746' \
	"the KV cache needed and available"
expect_jq '.skipped[0].reason | test("a flush does not make the KV cache larger")' \
	"rung 1 skipped: vLLM sizes the KV cache from its share, not from free memory"
run $L --job vllm_v1_kv_maxlen --reset --log "$LOGS/vllm_v1_kv_maxlen.log"
expect_out "^  change: \(1\) --max-model-len 77824 " "the first server knob is the log's own number"
expect_out "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 77824" "the command names the log's model"
# Qwen2.5-72B in bf16: the planner's 142.4 GiB is more than the pool, so no
# server knob (rung 2) fits it either (ladder's checks, test_ladder_judge.sh)
case_of vllm_v1_kv_negative vllm_kv_cache load vllm 3 '[1,2]'
expect_jq '.log.kv_cache_negative == true and .figures.kv_cache_available_bytes == null' \
	"a negative KV cache is said, not printed as 0"
case_of vllm_v0_cache_blocks vllm_kv_cache load vllm 2 '[1]'
case_of vllm_startup vllm_startup_memory load vllm 1 '[]'
run $L --job vllm_startup --reset --log "$LOGS/vllm_startup.log"
expect_out "torch.cuda.mem_get_info" "rung 1 says what vLLM's start-up check reads"
case_of vllm_serve_cuda_oom torch_cuda_oom serve vllm 1 '[]'
change2 vllm_serve_cuda_oom "--max-model-len 8192 \(from 16384" "a server's CUDA OOM gets the server's knobs, from the log's length"

# --- SGLang, TGI, llama.cpp, Ollama ------------------------------------------------------------
case_of sglang_mem_fraction sglang_memory load sglang 1 '[]'
change2 sglang_mem_fraction "--context-length.*--max-running-requests.*--mem-fraction-static" "SGLang's knobs"
case_of tgi_prefill_warmup tgi_memory load tgi 1 '[]'
change2 tgi_prefill_warmup "--max-batch-prefill-tokens.*--max-total-tokens" "TGI's knobs"
case_of llamacpp_load llamacpp_memory load llamacpp 1 '[]'
change2 llamacpp_load "-c ([0-9]+ )?\(--ctx-size.*-np 1.*--cache-type-k q8_0" "llama.cpp's knobs"
change2 llamacpp_load "a lower -ngl .*frees nothing" "llama.cpp: -ngl frees nothing on one pool"
case_of llamacpp_kv_cache llamacpp_memory load llamacpp 1 '[]'
case_of llamacpp_serve llamacpp_memory serve llamacpp 1 '[]'
# it asks for 338.1 GiB: no flush leaves that much, so rung 1 is skipped
case_of ollama_request_too_large ollama_memory load ollama 2 '[1]'
change2 ollama_request_too_large "num_ctx.*OLLAMA_NUM_PARALLEL=1.*OLLAMA_KV_CACHE_TYPE=q8_0" "Ollama's knobs"

# --- training: the log's method, batch and allocator figures ----------------------------------
case_of cpu_alloc_not_enough cpu_alloc_failed load training 1 '[]'
case_of driver_dmesg_step driver_no_memory step training 1 '[]'
change2 driver_dmesg_step "per_device_train_batch_size 4 -> 2, gradient_accumulation_steps 8 -> 16" \
	"the NVRM line after training steps: a step failure, with the log's batch"
case_of unsloth_qlora_step torch_cuda_oom step training 1 '[3]'
expect_jq '.skipped[0].reason | test("already QLoRA")' "Unsloth QLoRA: rung 3 skipped, there is no lower tier"
expect_jq '.fragmentation != null and (.fragmentation | test("expandable_segments:True"))' \
	"13 GiB reserved but unallocated: the fragmentation advice"
change2 unsloth_qlora_step "per_device_train_batch_size 2 -> 1, gradient_accumulation_steps 4 -> 8" \
	"Unsloth's banner gives the batch and the accumulation"
case_of peft_lora_step torch_cuda_oom step training 1 '[]'
run $L --job peft3 --reset --tried 1 --tried 2 --log "$LOGS/peft_lora_step.log"
expect_out "^  change: .*QLoRA" "PEFT LoRA (trainable% 0.0622): rung 3 is LoRA -> QLoRA"
expect_no_out "a full fine-tune becomes bf16 LoRA" "... not 'a full fine-tune becomes LoRA'"
case_of unsloth_full_step torch_cuda_oom step training 1 '[]'
change2 unsloth_full_step "max_seq_length 4096 -> 2048" "the log's sequence length"
# --- rung 4 names the catalog's next size down of the log's model -------------------------------
rung4() { # log pattern name
	run $L --job "$1-4" --reset --tried 1 --tried 2 --tried 3 --log "$LOGS/$1.log"
	expect_out "^  change: .*$2" "$3"
}
rung4 torch_step_trainer "next size down is llama-3.2-3b \(meta-llama/Llama-3.2-3B\)" \
	"meta-llama/Llama-3.1-8B: Llama 3.2 3B, the same generation (not Llama 2 7B)"
rung4 unsloth_full_step "next size down is qwen3-1.7b \(Qwen/Qwen3-1.7B\)" "unsloth/Qwen3-4B: Qwen3 1.7B"
rung4 llamacpp_load "than Meta Llama 3.1 70B Instruct: the catalog's next size down is llama-3.1-8b" \
	"llama.cpp's general.name (spaces, 'Meta', 'Instruct') is found in the catalog"
expect_out "whether it fits is for 'sparkops ladder --plan \.\.\.' to say" "no fit claimed without a plan"
run $L --job unknown-4 --reset --tried 1 --tried 2 --tried 3 --log "$LOGS/torch_old_format.log"
expect_out "^  change: a smaller model than this one \(the next size down" "a log naming no model: no name invented"
done_testing
