#!/bin/sh
# SPDX-License-Identifier: MIT
# sparkops plan --padding max|longest (batches of varying length: the
# caching allocator's slack holds the loss buffers once more) and
# --framework megatron (fp32 main grads kept throughout, 6 bytes a logit);
# docs/plan.md, "Batches of varying length" and "Frameworks".
. "$(dirname "$0")/lib.sh"
P="env SPARKOPS_NVML_LIB=/nonexistent $SPARKOPS --procfs $FIX/no-gpu/proc plan llama-3.1-8b --uma no --budget 1TiB --json"

for m in reserved process allocated; do
	# shellcheck disable=SC2086
	run $P --method lora --seq 4096 --measure $m
	cp "$OUT" "$TMP/max.json"
	# shellcheck disable=SC2086
	run $P --method lora --seq 4096 --measure $m --padding longest
	expect_rc 0 "--padding longest ($m)"
	expect_jq '.settings.padding == "longest"' "settings.padding says longest"
	d=$(jq -n --slurpfile a "$TMP/max.json" --slurpfile b "$OUT" '$b[0].terms.allocator_slack - $a[0].terms.allocator_slack == $a[0].terms.logits')
	[ "$d" = true ]
	_report $? "$m: the slack grows by the loss buffers once"
	d=$(jq -n --slurpfile a "$TMP/max.json" --slurpfile b "$OUT" '$b[0].measure_bytes - $a[0].measure_bytes')
	want=$(jq .terms.logits "$TMP/max.json")
	[ "$m" = allocated ] && want=0
	[ "$d" = "$want" ]
	_report $? "$m: measure_bytes moves by $want ($d)"
done
jq -e '.settings.padding == "max"' "$TMP/max.json" >/dev/null
_report $? "the default is max"
# shellcheck disable=SC2086
run $P --method infer --padding longest
cp "$OUT" "$TMP/inf.json"
# shellcheck disable=SC2086
run $P --method infer
d=$(jq -n --slurpfile a "$TMP/inf.json" --slurpfile b "$OUT" '$a[0].peak_bytes == $b[0].peak_bytes')
[ "$d" = true ]
_report $? "inference: --padding changes nothing"
# shellcheck disable=SC2086
run $P --padding min
expect_rc 2 "--padding min is refused"
expect_err "is not max or longest" "and says what it takes"

# megatron: 18 bytes a trained parameter, no overlap, 6 bytes a logit
# shellcheck disable=SC2086
run $P --method full --framework megatron --no-grad-ckpt --seq 4096
expect_rc 0 "--framework megatron"
expect_jq '.settings.framework == "megatron"' "settings.framework says megatron"
expect_jq '(.terms.weights + .terms.gradients + .terms.optimizer + .terms.master_weights) == 18 * .trainable_params' \
	"full fine-tuning keeps 18 bytes a parameter"
expect_jq '.overlap_bytes == 0' "the fp32 main grads are kept through backward: no overlap"
expect_jq '.terms.logits == 6 * 4096 * 128256' "6 bytes a logit"
# shellcheck disable=SC2086
run $P --framework megatrom
expect_rc 2 "an unknown framework is refused"
expect_err "megatron" "the message names megatron"
done_testing
