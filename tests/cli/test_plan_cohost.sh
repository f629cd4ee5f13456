#!/bin/sh
# SPDX-License-Identifier: MIT
# plan and 'ladder --plan' judge a plan against one budget, built by one
# path (src/account/budget.c): --budget or the live reading, less every
# --cohost, an ollama:FILE.gguf sized by its file. The ladder once built
# its own budget and left a co-host given as a file out (ollama:big.gguf
# with --budget 60GiB: plan said 40 GiB, ladder --plan 60 GiB).
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
R=$(sysroot gb10-idle)
export XDG_STATE_HOME="$TMP/state"
LOG="$FIX/oomlogs/torch_step_trainer.log"
L="$S ladder $R --log $LOG"
# a 20 GiB model file for the co-hosted server (sparse: no disk taken)
G="$TMP/big.gguf"
truncate -s 20G "$G"
M='llama-3.1-8b --method lora --seq 2048 --batch 2'

# --- --budget less a co-host given as a file ------------------------------------------
run $S plan $R $M --budget 60GiB --cohost "ollama:$G" --json
expect_rc 0 "plan --cohost ollama:FILE.gguf --budget 60GiB"
expect_jq '.budget_bytes == 40 * 1073741824 and .budget_before_cohosts_bytes == 60 * 1073741824' \
	"plan: 60 GiB less the 20 GiB file is 40 GiB"
plan_budget=$(jq '.budget_bytes' "$OUT")
run $L --job f1 --tried 1 --plan "$M --budget 60GiB --cohost ollama:$G" --json
expect_rc 0 "ladder --plan with the same co-host file"
expect_jq ".plan.budget_bytes == $plan_budget" "ladder --plan: the same 40 GiB as plan ($plan_budget)"
expect_jq ".plan.as_given.budget_bytes == $plan_budget and all(.plan.steps[]; .budget_bytes == $plan_budget)" \
	"every step is judged against it"
run $L --job f1h --tried 1 --plan "$M --budget 60GiB --cohost ollama:$G"
expect_out '^  as given +peak [0-9.]+ GiB of 40.0 GiB' "the human plan says 40.0 GiB"

# --- the live budget less the file; the budget after a flush less it too ----------------
run $S plan $R $M --cohost "ollama:$G" --json
live=$(jq '.budget_bytes' "$OUT")
flush=$(jq '.budget_after_flush_bytes' "$OUT")
expect_jq '.budget_source == "live" and .budget_bytes == .budget_before_cohosts_bytes - 20 * 1073741824' \
	"plan: the live budget less the file"
run $L --job f2 --plan "$M --cohost ollama:$G" --json
expect_jq ".plan.budget_bytes == $live and .plan.budget_source == \"live\"" "ladder --plan: the same live budget ($live)"
expect_jq ".plan.rung == 1 and .plan.steps[0].change == \"flush\" and .plan.steps[0].budget_bytes == $flush" \
	"rung 1: the same budget after a flush as plan ($flush)"

# --- a fraction of what --budget gives, and two servers ---------------------------------
run $S plan $R $M --budget 80GiB --cohost vllm:0.25 --cohost "ollama:$G" --json
both=$(jq '.budget_bytes' "$OUT")
expect_jq '.budget_bytes == 40 * 1073741824' "plan: 80 GiB less a quarter and the file"
run $L --job f3 --tried 1 --plan "$M --budget 80GiB --cohost vllm:0.25 --cohost ollama:$G" --json
expect_jq ".plan.budget_bytes == $both" "ladder --plan: the same"

# --- a co-host file that is not there: both say so, exit 2 -------------------------------
run $S plan $R $M --budget 60GiB --cohost "ollama:$TMP/none.gguf"
expect_rc 2 "plan: a missing co-host file is an input error"
expect_err "none\.gguf" "plan names the file"
run $L --job f4 --tried 1 --plan "$M --budget 60GiB --cohost ollama:$TMP/none.gguf"
expect_rc 2 "ladder --plan: the same, never a co-host of 0 bytes"
expect_err "none\.gguf" "ladder --plan names the file"
done_testing
