#!/bin/sh
# SPDX-License-Identifier: MIT
# sparkops ladder: every rung is checked against the numbers the tool has
# before it is offered (the log's figures, the live pool, the planner); a
# server's own hint is followed; Ray's memory monitor is its own failure; a
# log with no memory failure offers no rung and exits 3. The logs in
# tests/fixtures/ladderlogs are written as each program prints them.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
LOGS=$FIX/ladderlogs
export XDG_STATE_HOME="$TMP/state"
# the ladder's state under XDG_STATE_HOME is what this file reads back
unset SPARKOPS_RUN_DIR
LOADED="$S ladder $(sysroot gb10-loaded)" # 2.2 GiB now, a flush gives back 44.6 GiB: 46.8 GiB after it
IDLE="$S ladder $(sysroot gb10-idle)"     # 88.4 GiB now, 110.3 GiB after a flush

# --- vLLM: Qwen2.5-72B in bf16 fails in load_weights ----------------------------------------
run $LOADED --job w72 --reset --json --log "$LOGS/vllm_load_weights_72b.log"
expect_rc 0 "vLLM load_weights OOM: advice given"
expect_jq '.failure == "torch_cuda_oom" and .family == "vllm" and .phase == "load"' "a CUDA OOM in vLLM's load"
expect_jq '[.skipped[].rung] == [1, 2] and .next_rung == 3' "flush-and-rerun and the server's knobs are skipped"
expect_jq '.skipped[0].reason | test("planner puts qwen2.5-72b served in bf16 at 142.4 GiB.*46.8 GiB free after it")' \
	"rung 1's reason: the planner's 142.4 GiB against what a flush leaves"
expect_jq '.skipped[1].reason | test("more than the whole pool \\(119.7 GiB\\)")' "rung 2's reason: more than the pool"
expect_jq '.change | test("8-bit weights.*4-bit")' "rung 3 names the planner's quantized needs"
run $IDLE --job w72i --reset --json --log "$LOGS/vllm_load_weights_72b.log"
expect_jq '[.skipped[].rung] == [1, 2]' "idle box: a flush (110.3 GiB) does not fit 142.4 GiB either"

# --- vLLM: the start-up check (2.77/119.7 GiB free, 0.9 = 107.73 GiB asked) ------------------
run $LOADED --job st --reset --json --log "$FIX/oomlogs/vllm_startup.log"
expect_jq '.skipped[0].rung == 1 and (.skipped[0].reason | test("a flush gives back 44.6 GiB \\(46.8 GiB free after it\\); the job asked for 107.7 GiB"))' \
	"rung 1 is skipped: after a flush 46.8 GiB < the 107.7 GiB asked"
expect_jq '.next_rung == 2 and (.change | test("rerun the job unchanged") | not)' "no claim that an unchanged rerun works"
expect_jq '.change | test("--gpu-memory-utilization 0.35.*names neither the model nor its weights")' \
	"with no model named, the share that fits is given with what it must hold"
run $LOADED --job st72 --reset --json --log "$LOGS/vllm_startup_72b.log"
expect_jq '[.skipped[].rung] == [1, 2] and .next_rung == 3' "the same check naming a 72B model: no share can work"
expect_jq '(.change | test("0\\.35") | not)' "never 0.35 for a ~140 GiB model"
run $LOADED --job stplan --reset --json --log "$FIX/oomlogs/vllm_startup.log" --plan 'qwen2.5-72b --method infer'
expect_jq '[.skipped[].rung] == [1, 2] and (.skipped[1].reason | test("142.4 GiB"))' \
	"--plan's model: the planner's number decides"
run $IDLE --job st72i --reset --json --log "$LOGS/vllm_startup_72b.log" --tried 3
expect_jq '.next_rung == 4 and (.change | test("planner puts qwen2.5-72b at 142.4 GiB"))' \
	"when no share can work, rung 4 gives the planner's number"

# a box with 57.9 GiB after a flush and nothing else holding the pool: Mixtral
# 8x7B served in bf16 (the planner: 94.1 GiB at a 2048 context and one
# sequence; 109.0 GiB as --plan gives it) fits the pool (119.7 GiB), but
# no share vLLM can reserve now
cp -r "$FIX/gb10-idle" "$TMP/half"
sed -i -e 's/^MemFree: .*/MemFree:        41943040 kB/' -e 's/^MemAvailable: .*/MemAvailable:   63438848 kB/' \
	"$TMP/half/proc/meminfo"
HALF="$S ladder --procfs $TMP/half/proc --sysfs $TMP/half/sys"
run $HALF --job mx --reset --json --log "$FIX/oomlogs/vllm_startup.log" --plan 'mixtral-8x7b --method infer --seq 16384 --batch 4'
expect_jq '[.skipped[].rung] == [1, 2] and .next_rung == 3' "Mixtral at 94 GiB, 57.9 GiB after a flush: rungs 1 and 2 skipped"
expect_jq '.skipped[0].reason | test("the job asked for 107.7 GiB")' "rung 1: the start-up check's own figure first"
expect_jq '.skipped[1].reason | test("2048 context and one sequence at 94.1 GiB; a flush leaves 5[0-9.]+ GiB: the server cannot reserve")' \
	"rung 2 against the least its knobs can make it (94.1 GiB)"

# --- vLLM: KV cache log whose weights are 65.7 GiB (gpu_memory_utilization 0.65) --------------
run $LOADED --job kv --reset --json --log "$LOGS/vllm_kv_fp8_70b.log"
expect_jq '.change | test("--gpu-memory-utilization: no share fits now: its weights \\(65.7 GiB.*at least 0.60")' \
	"loaded box: no share below what the 65.7 GiB weights need is offered"
expect_jq '(.change | test("utilization 0\\.35")) | not' "0.35 is never offered under 65.7 GiB of weights"
expect_jq '.model_check.model == "llama-3.3-70b" and .weights_bytes == 70544837837' \
	"the FP8 checkpoint is the catalog's llama-3.3-70b; the weights are the log's (65.7 GiB)"
run $LOADED --job kv3 --reset --json --tried 2 --log "$LOGS/vllm_kv_fp8_70b.log"
expect_jq '.next_rung == 3 and (.change | test("4-bit checkpoint of RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic .*instead of its 8-bit weights .*with 4-bit"))' \
	"rung 3 of an FP8 checkpoint is 4-bit weights, with the planner's figure"
run $IDLE --job kvi --reset --json --log "$LOGS/vllm_kv_fp8_70b.log"
expect_jq '.change | test("--gpu-memory-utilization 0.90: .*higher than the 0.65 it ran with")' \
	"idle box: 0.90, in the direction of vLLM's own hint (increase)"

# --- SGLang: CUDA graph capture at mem_fraction_static=0.88, "set ... to a smaller value" ------
run $IDLE --job sg --reset --tried 1 --json --log "$LOGS/sglang_cuda_graph.log"
expect_jq '.family == "sglang" and .next_rung == 2' "SGLang's rung 2"
expect_jq '.change | test("--cuda-graph-max-bs 16")' "--cuda-graph-max-bs is named, with the log's example"
expect_jq '.change | test("--mem-fraction-static 0.80: .*lower than the 0.88 it ran with")' \
	"the share follows the hint: 0.80, below 0.88"
expect_jq '(.change | test("mem-fraction-static 0\\.9")) | not' "never 0.90 against a 'smaller' hint"
expect_jq '.server_hint.direction == "lower" and .server_hint.flag == "--mem-fraction-static" and .server_hint.line == 30 and .share_used == 0.88 and .share.advised == 0.8' \
	"JSON: the hint, the share it ran with and the share advised"
expect_jq '.model_check.model == "qwen2.5-32b" and .model_check.from == "the log'"'"'s model" and .model_check.need_bytes > 0' \
	"JSON: the planner's check of the log's model"
run $LOADED --job sgl --reset --json --log "$LOGS/sglang_cuda_graph.log"
expect_jq '.skipped[0].rung == 1 and (.skipped[0].reason | test("qwen2.5-32b served in bf16 at 67.9 GiB"))' \
	"loaded box: a flush leaves 46.8 GiB for a 67.9 GiB model: rung 1 skipped"

# --- Ollama: requires 76.3 GiB, 12.1 GiB available ---------------------------------------------
run $LOADED --job ol --reset --json --log "$LOGS/ollama_sysmem_76.log"
expect_jq '.failure == "ollama_memory" and [.skipped[].rung] == [1] and .next_rung == 2' \
	"loaded box: a flush leaves 46.8 GiB < 76.3 GiB: rung 1 skipped"
expect_jq '.skipped[0].reason | test("the job asked for 76.3 GiB")' "the reason names what Ollama asked for"
run $IDLE --job oli --reset --json --log "$LOGS/ollama_sysmem_76.log"
expect_jq '.next_rung == 1 and (.change | test("covers the 76.3 GiB the job asked for"))' \
	"idle box: 110.3 GiB after a flush covers 76.3 GiB: rung 1, said why"

# --- Ray's memory monitor --------------------------------------------------------------------
run $IDLE --job ray --reset --tried 1 --json --log "$LOGS/ray_node_oom.log"
expect_rc 0 "Ray: advice given"
expect_jq '.failure == "ray_oom_kill" and .family == "ray"' "Ray's monitor is its own failure, not a CUDA OOM"
expect_jq '.log.engine == null' "an 'ollama serve' row of Ray's table does not make the job Ollama's"
expect_jq '(.change | test("OLLAMA_NUM_PARALLEL")) | not' "no Ollama knobs"
expect_jq '.change | test("RAY_memory_usage_threshold.*0.95") and test("RAY_memory_monitor_refresh_ms=0")' \
	"Ray's own knobs, with the threshold the log names"
expect_jq '.change | test("Top 10 memory users.*4 rows.*ray::load_and_generate")' "Ray's table read as Ray's report"
expect_jq '.ray.used_bytes == 121970000000 and .ray.total_bytes == 128380000000 and .ray.threshold == 0.95 and .ray.table_rows == 4' \
	"JSON: Ray's figures (GB = 10^9 bytes)"
run $IDLE --job rayh --reset --log "$LOGS/ray_node_oom.log"
expect_out "^  failure +ray_oom_kill: Ray's memory monitor" "human: the failure"

# --- not a memory failure: exit 3, no rung ---------------------------------------------------
run $IDLE --job imp --reset --json --log "$LOGS/import_error.log"
expect_rc 3 "an ImportError is not a memory failure"
expect_jq '.failure == "unknown" and .next_rung == null and .skipped == [] and .not_memory_failure' "no rung is offered"
expect_jq '.change | test("line 7: ImportError: cannot import name")' "the log's last error is named"
expect_jq '.next_rung_title == "not a memory failure: no rung" and .rungs_tried == []' "its title says so; nothing counted tried"
expect_jq '(.advice | test("max_seq_length|rung [1-4]")) | not' "no rung's advice"
run $IDLE --job imp --log "$LOGS/import_error.log"
expect_rc 3 "human output: exit 3 too"
expect_out "no memory failure" "human: said"
# the job's state is left as it was: a proposal stands, nothing is counted tried
run $IDLE --job st3 --reset --json --log "$LOGS/ollama_sysmem_76.log"
expect_jq '.next_rung == 1' "a memory failure: rung 1 proposed"
run $IDLE --job st3 --json --log "$LOGS/import_error.log"
expect_rc 3 "then a log with no memory failure"
grep -q '^proposed 1$' "$XDG_STATE_HOME/sparkops/ladder-st3.state"
_report $? "the state still holds the proposal"
run $IDLE --job st3 --json --log "$LOGS/ollama_sysmem_76.log"
expect_jq '.next_rung == 1 and .counted_tried == null and .rungs_tried == []' "the same failed log again: the same rung"
run $S ladder --help
expect_out "3 not a memory failure" "--help documents exit 3"
# run --ladder treats it as "don't retry"
: >"$TMP/tries"
run $S run $(sysroot gb10-idle) --interval 1 --quiet --log "$TMP/lj.csv" --summary "$TMP/s.json" --ladder --ladder-seq-flag --max_seq_length -- \
	sh -c "echo try >>'$TMP/tries'; cat '$LOGS/import_error.log' >&2; exit 1" job --max_seq_length 2048
expect_rc 1 "run --ladder: the job's own exit status"
expect_err "not an out-of-memory failure: not retried" "run --ladder: not retried"
[ "$(wc -l <"$TMP/tries")" = 1 ] && jq -e '.ladder_stop.reason == "not_oom"' "$TMP/s.json" >/dev/null
_report $? "run --ladder: one try, stopped as not_oom"
# --- plan --solve and the verdict agree -------------------------------------------------------
# on catalog models: the answer's own plan is "fits", one step up is stated and is
# tight or no, and the plan at that step gives the same verdict
for c in "llama-3.1-8b --method lora --budget 40GiB --solve seq" "qwen2.5-7b --method full --budget 88GiB --solve batch" \
	"llama-3.1-70b --method qlora --nodes 2 --budget 60GiB --solve seq" "qwen3-8b --method infer --budget 30GiB --solve batch"; do
	set -- $c
	model=$1
	shift
	run $S plan $model "$@" --json
	what=$(jq -r .solve.what "$OUT")
	ans=$(jq -r "if .solve.what == \"seq\" then .solve.max_seq else .solve.max_batch end" "$OUT")
	nxt=$(jq -r .solve.next "$OUT")
	nv=$(jq -r .solve.next_verdict "$OUT")
	expect_jq '.solve.verdict == "fits" and (.solve.next_verdict == "tight" or .solve.next_verdict == "no")' \
		"$model --solve $what: $ans fits, one step up ($nxt) is $nv"
	case "$ans$nxt" in
	'' | *[!0-9]*)
		_report 1 "$model --solve $what: a number and the step past it ($ans, $nxt)"
		continue
		;;
	esac
	opts=$(echo "$@" | sed 's/--solve [a-z]*//')
	# shellcheck disable=SC2086
	run $S plan $model $opts --$what "$ans" --json
	expect_jq '.verdict == "fits"' "$model: the plan at --$what $ans says fits"
	# shellcheck disable=SC2086
	run $S plan $model $opts --$what "$nxt" --json
	expect_jq ".verdict == \"$nv\"" "$model: the plan at --$what $nxt says $nv, as --solve said"
done
run $S plan llama-3.1-8b --method lora --budget 40GiB --solve seq
expect_out '^solve: the largest packing length \(--seq\) whose verdict is fits: [0-9]+ .*one step up, --seq [0-9]+: (tight|no)' \
	"human: the answer and the step up"
done_testing
