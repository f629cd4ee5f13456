#!/bin/sh
# SPDX-License-Identifier: MIT
# report's human text: sizes in human units while the log keeps bytes.
. "$(dirname "$0")/lib.sh"
SC="$(dirname "$0")/../fake-nvml/scenarios"
S=$SPARKOPS
NODRV="env SPARKOPS_NVML_LIB=/nonexistent/libnvidia-ml.so.1"
GB10="env SPARKOPS_NVML_LIB=$FAKE_NVML FAKE_NVML_SCENARIO=$SC/gb10.scn"
DISC="env SPARKOPS_NVML_LIB=$FAKE_NVML FAKE_NVML_SCENARIO=$SC/discrete.scn"

# --- human text in human units; the log keeps bytes ----------------------------------------
sed 's/guard_warn,free=2.1GiB floor=2GiB/guard_warn,free_bytes=21468246016 floor_bytes=8589934592/' \
	"$FIX/logs/thermal-guard.csv" >"$TMP/gb.csv"
run $S report "$TMP/gb.csv"
expect_out 'guard +[0-9:]+ warn free=20\.0 GiB floor=8\.0 GiB' "the summary's guard line in GiB"
expect_no_out 'free_bytes=|21468246016' "no raw bytes in the human summary"
run $S report --json "$TMP/gb.csv"
expect_jq '.guard_actions[0].detail | test("free_bytes=21468246016")' "the JSON keeps the log's bytes"

done_testing
