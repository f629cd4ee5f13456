#!/bin/sh
# SPDX-License-Identifier: MIT
# sparkops ladder: numbers, not verbs (issue 15). --plan 'PLAN' runs the
# planner for the next rung's change against the live budget (a fixture
# tree: the same budget every run); the JSON contract keys; skipped rungs
# with their reason; the log's facts in the advice (fragmentation, a
# server's own knobs); --apply 1 shows the reading after the flush.
. "$(dirname "$0")/lib.sh"
# these cases flush into a fixture tree of our own: the test switch (docs/RELIABILITY.md)
export SPARKOPS_TEST_PROCFS_WRITES=1
S=$SPARKOPS
LOGS=$FIX/oomlogs
export XDG_STATE_HOME="$TMP/state"
L="$S ladder $(sysroot gb10-idle)"
P8='llama-3.1-8b --method lora --seq 4096 --batch 4'

# --- the JSON contract -----------------------------------------------------------------
run $L --job contract --json --log "$LOGS/torch_step_trainer.log"
expect_rc 0 "ladder --json"
expect_jq 'has("phase") and has("failure") and has("next_rung") and has("rungs_tried") and has("advice")' \
	"the contract's keys: phase, failure, next_rung, rungs_tried, advice"
expect_jq 'has("skipped") and has("family") and has("fragmentation") and has("plan") and has("live_before_flush")' \
	"the new keys: skipped, family, fragmentation, plan, live_before_flush"
expect_jq '.plan == null and .live_before_flush == null and .family == "training" and .skipped == []' \
	"without --plan or a flush: null, training, nothing skipped"
expect_jq '.log | has("engine") and has("method") and has("model") and has("est_max_model_len")' "the log's facts under log"

# --- --plan: rung 2 ------------------------------------------------------------------------
run $L --job p2 --tried 1 --plan "$P8"
expect_rc 0 "--plan, human"
expect_out "^PLAN  $P8  \(budget: live\)" "the plan as given is echoed with its budget"
expect_out '^  as given +peak [0-9.]+ GiB of 88.4 GiB: (fits with [0-9.]+ GiB to spare|does not fit by [0-9.]+ GiB)' \
	"the plan as given: its peak against the live budget"
expect_out '^  rung 2: --seq 2048 +peak [0-9.]+ GiB of 88.4 GiB: ' "rung 2: the sequence halved"
expect_out '^  rung 2: --batch 2 +peak ' "rung 2: the micro-batch halved"
run $L --job p2j --tried 1 --plan "$P8" --json
expect_jq '.plan.rung == 2 and .plan.change == "--seq 2048" and .plan.model == "llama-3.1-8b"' "JSON: the rung, the change, the model"
expect_jq '.plan.budget_bytes == .live.budget_now_bytes and .plan.budget_source == "live"' "JSON: the live budget"
expect_jq '(.plan.peak_bytes | type) == "number" and (.plan.fits | type) == "boolean"' "JSON: peak_bytes and fits"
expect_jq '.plan.steps[0].peak_bytes < .plan.as_given.peak_bytes' "halving the sequence lowers the peak"
expect_jq '.plan.steps[0].fits == (.plan.steps[0].peak_bytes <= .plan.budget_bytes)' "fits agrees with the numbers"
# the same numbers as 'sparkops plan' itself
run $S plan $(sysroot gb10-idle) llama-3.1-8b --method lora --seq 2048 --batch 4 --json
need=$(jq '.need_bytes' "$OUT")
run $L --job p2k --tried 1 --plan "$P8" --json
expect_jq ".plan.steps[0].peak_bytes == $need" "rung 2's peak is sparkops plan's need for --seq 2048 ($need)"

# --- rung 3: the method one tier down; nothing below QLoRA --------------------------------
run $L --job p3 --tried 1 --tried 2 --plan "$P8" --json
expect_jq '.plan.rung == 3 and .plan.change == "--method qlora"' "rung 3: LoRA becomes QLoRA"
expect_jq '.plan.steps[0].peak_bytes < .plan.as_given.peak_bytes' "QLoRA needs less"
run $L --job p3q --tried 1 --tried 2 --plan 'llama-3.1-8b --method qlora' --json
expect_jq '.plan.change == null and (.plan.why_none | test("no lower tier"))' "a QLoRA plan: nothing lower, said"
run $L --job p3f --tried 1 --tried 2 --plan 'llama-3.1-8b --method full --seq 1024' --json
expect_jq '.plan.change == "--method lora"' "rung 3: a full fine-tune becomes LoRA"

# --- rung 4: a concrete smaller model; two Sparks only when the planner says they fit -------
run $L --job p4 --tried 1 --tried 2 --tried 3 --plan 'llama-3.1-70b --method lora --seq 4096 --batch 4' --json
expect_jq '.plan.rung == 4 and (.plan.smaller_model | type) == "string"' "rung 4: the catalog's smaller model"
expect_jq '.plan.smaller_model as $m | .change | contains($m + " instead of llama-3.1-70b")' "rung 4's change names it"
expect_jq '(.plan.two_sparks_fit | type) == "boolean"' "two Sparks planned"
expect_jq 'if .plan.two_sparks_fit then (.change | test("two Sparks with FSDP over the link")) else (.change | test("do not fit either")) end' \
	"two Sparks with FSDP named only as the planner says"
run $L --job p4b --tried 1 --tried 2 --tried 3 --plan 'llama-3.1-8b --method lora --seq 2048' --json
expect_jq '.plan.two_sparks_fit == true and (.change | test("two Sparks with FSDP over the link \\(the planner: "))' \
	"a plan that fits on two Sparks: named, with the per-node need"
run $L --job p4c --apply 4 --plan 'llama-3.1-70b --method lora' --json
expect_rc 2 "--apply 4 --plan: the change is printed"
expect_jq '.rung == 4 and .plan.rung == 4 and (.change | test("instead of llama-3.1-70b"))' "--apply 4 plans rung 4"
# the model as the plan names it goes into the job's commands (a log that names none)
run $L --job p4d --tried 1 --tried 2 --tried 3 --plan 'meta-llama/Llama-3.1-70B --method lora' --json
expect_jq '.plan.model == "llama-3.1-70b" and (.change | test("instead of meta-llama/Llama-3.1-70B"))' \
	"rung 4 names the model as the plan gave it"
run $L --job pv --tried 1 --log "$LOGS/vllm_startup.log" --plan 'Qwen/Qwen3-30B-A3B --method infer --seq 32768 --batch 8' --json
expect_jq '(.change | test("vllm serve Qwen/Qwen3-30B-A3B")) and .plan.rung == 2 and .plan.steps[0].change == "--seq 16384"' \
	"a vLLM failure: the plan's model in the serve command, the context halved"
# rung 1: the same job after a flush
run $L --job p1 --plan "$P8" --json
expect_jq '.next_rung == 1 and .plan.change == "flush" and .plan.steps[0].budget_bytes == .live.budget_after_flush_bytes' \
	"rung 1: the plan against the budget after a flush"

# --- --plan: bad input --------------------------------------------------------------------
run $L --job bad --plan "llama-3.1-8b --method 'lora"
expect_rc 2 "an unclosed quote"
expect_err "unclosed quote" "said"
run $L --job bad --plan "llama-3.1-8b --methd lora"
expect_rc 2 "a typo in the plan"
expect_err "unknown option '--methd'" "the plan's option is named"
run $L --job bad --plan "--method lora"
expect_rc 2 "no model in the plan"
expect_err "which model" "said"
run $L --job bad --plan ""
expect_rc 2 "an empty plan"
run $L --job bad --plan "llama-3.1-8b --procfs /tmp"
expect_rc 2 "--procfs inside the plan"
expect_err "to ladder itself" "said where it belongs"
run $L --job bad --plan "no-such-model-xyz --method lora"
expect_rc 2 "an unknown model"

# --- skipped rungs -----------------------------------------------------------------------------
# a machine whose page cache is nearly empty: a flush gives back too little
cp -r "$FIX/gb10-idle" "$TMP/dry"
sed -i -e 's/^Cached: .*/Cached:           102400 kB/' -e 's/^Buffers: .*/Buffers:            1024 kB/' \
	-e 's/^Active(file): .*/Active(file):      51200 kB/' -e 's/^Inactive(file): .*/Inactive(file):    51200 kB/' \
	-e 's/^SReclaimable: .*/SReclaimable:     204800 kB/' \
	"$TMP/dry/proc/meminfo"
D="$S ladder --procfs $TMP/dry/proc --sysfs $TMP/dry/sys"
run $D --job dry --json --log "$LOGS/torch_step_trainer.log"
expect_jq '.live.reclaimable_bytes < 1073741824' "the fixture: under 1 GiB reclaimable"
expect_jq '.next_rung == 2 and .skipped[0].rung == 1 and (.skipped[0].reason | test("a flush would give back only [0-9.]+ (MiB|GiB|KiB): it costs a rerun for nothing"))' \
	"rung 1 skipped, with the reason"
expect_jq '.rungs_tried == []' "a skipped rung is not marked tried"
run $D --job dry2 --log "$LOGS/torch_step_trainer.log"
expect_out '^LADDER  1 skipped  \[2\]  3  4' "human: the skipped rung on the ladder line"
expect_out '^  rung 1 skipped: a flush would give back only' "human: the reason"
run $L --job dry3 --json --log "$LOGS/torch_step_trainer.log"
expect_jq '.next_rung == 1 and .skipped == []' "with a full page cache rung 1 stays"

# --- the log's facts ----------------------------------------------------------------------------
run $L --job frag --json --tried 1 --log "$LOGS/torch_step_trainer.log"
expect_jq '.figures.reserved_unallocated_bytes >= 1073741824 and (.fragmentation | test("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"))' \
	"reserved but unallocated >= 1 GiB: the fragmentation advice"
expect_jq '(.before_next_rung | test("expandable_segments")) and (.advice | startswith("before changing the job:"))' \
	"it comes before any change to the job"
run $L --job vllm --json --tried 1 --log "$LOGS/vllm_startup.log"
expect_jq '.family == "vllm" and (.change | test("--gpu-memory-utilization")) and (.change | test("--max-model-len")) and (.change | test("batch_size") | not)' \
	"a vLLM failure: the server's own knobs"
expect_jq '(.change | index("--gpu-memory-utilization")) < (.change | index("--max-model-len"))' \
	"the start-up check: the memory share first"
run $L --job vllm1 --json --log "$LOGS/vllm_startup.log"
expect_jq '.next_rung == 1 and (.change | test("mem_get_info")) and (.change | test("MemAvailable"))' \
	"rung 1 for vLLM says what its start-up check reads"
run $L --job oll --json --tried 1 --log "$LOGS/ollama_sysmem.log"
expect_jq '.family == "ollama" and (.change | test("OLLAMA_KV_CACHE_TYPE"))' "an Ollama failure: Ollama's knobs"

# --- --apply 1: the reading after the flush (a fixture tree: root writes its drop_caches) ---------
if [ "$(id -u)" = 0 ]; then
	cp -r "$FIX/gb10-idle" "$TMP/w"
	mkdir -p "$TMP/w/proc/sys/vm"
	: >"$TMP/w/proc/sys/vm/drop_caches"
	W="$S ladder --procfs $TMP/w/proc --sysfs $TMP/w/sys"
	run $W --job af --apply 1 --json
	expect_rc 0 "--apply 1 (fixture)"
	expect_jq 'has("freed_bytes") and (.live_before_flush | type) == "object" and (.live | type) == "object"' \
		"JSON: live (after the flush), live_before_flush and freed_bytes"
	run $W --job af2 --apply 1
	expect_out '^  live +[0-9.]+ GiB for a new job now \(read after the flush; before it: [0-9.]+ GiB\)$' \
		"human: the now line is the reading after the flush"
else
	skip_case "--apply 1 after-flush reading" "needs root (uid $(id -u))"
fi
# --- --plan on a log that shows no memory failure: nothing to plan, exit 3, no crash
run $L --job noplan --json --plan "$P8" --log "$LOGS/clean_run.log"
expect_rc 3 "--plan --json on a log with no memory failure: exit 3 (not a memory failure)"
expect_jq '.plan == null' "--plan with no failure: plan is null (no rung was planned)"
run $L --job noplan2 --plan "$P8" --log "$LOGS/clean_run.log"
expect_rc 3 "--plan, human, on a log with no memory failure: exit 3"
expect_out 'not a memory failure' "human: says it is not a memory failure"
done_testing
