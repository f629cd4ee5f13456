#!/bin/sh
# SPDX-License-Identifier: MIT
# "Every message true", the items still open (test_truth.sh holds the first ones).
. "$(dirname "$0")/lib.sh"
SC="$(dirname "$0")/../fake-nvml/scenarios"
S=$SPARKOPS
NODRV="env SPARKOPS_NVML_LIB=/nonexistent/libnvidia-ml.so.1"
DISC="env SPARKOPS_NVML_LIB=$FAKE_NVML FAKE_NVML_SCENARIO=$SC/discrete.scn"

# --- 10. plan's LoRA targets are the ones the trainable count counts ------------------
run $NODRV $S plan gpt-oss-20b --method lora $(sysroot gb10-idle)
expect_out 'LoRA r=16 on q,k,v,o \(gate,up,down: .*not counted\)' "gpt-oss: the header lists the attention targets it counts, and says why the MLP ones are not"
expect_no_out 'on q,k,v,o,gate,up,down' "not 'on q..down' next to an attention-only count"
run $NODRV $S plan gpt-oss-20b --method lora --json $(sysroot gb10-idle)
expect_jq '.settings.lora_targets_counted == "q,k,v,o"' "JSON: lora_targets_counted"
run $NODRV $S plan llama-3.1-8b --method lora $(sysroot gb10-idle)
expect_out 'LoRA r=16 on q,k,v,o,gate,up,down$' "a dense model still lists all seven"

done_testing
