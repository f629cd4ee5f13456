#!/bin/sh
# SPDX-License-Identifier: MIT
# One model of the pool (probe/poolmodel.h): status, ladder and the run
# summary count the pool the same way on the loaded Spark fixture: 'used' is
# total - free - page cache (68.5 GiB), a server is counted by what it holds
# (vLLM 3.1 GiB), never by its cap (0.50 = 59.8 GiB).
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
NONV="env SPARKOPS_NVML_LIB=/nonexistent/libnvidia-ml.so.1"
L=$(sysroot gb10-loaded)
export XDG_STATE_HOME="$TMP/state"

run $NONV $S status $L
expect_out '^  used +68\.5 GiB +total - free - page cache' "status: used 68.5 GiB, the page cache apart"
run $NONV $S status --json $L
expect_jq '.pool.used_bytes + .pool.page_cache_bytes + .pool.free_bytes == .pool.total_bytes' \
	"status --json: used + page cache + free = total"
expect_jq '(.pool.used_bytes / 1073741824 * 10 | round) == 685' "status --json: used_bytes is 68.5 GiB"
expect_jq '[.processes[] | select(.name=="vllm")][0] | .held_bytes == .rss_bytes and .cap_bytes > .held_bytes' \
	"status --json: vLLM holds its RSS; its cap is apart"
held=$(jq '[.processes[].held_bytes] | add' "$OUT")
expect_jq ".pool.processes_held_bytes == $held" "status --json: processes_held_bytes is the sum of held_bytes"

run $NONV $S ladder $L --log "$FIX/oomlogs/vllm_startup.log" --json
expect_jq '[.concurrent[] | select(.name=="vllm")][0] | (.holds_bytes / 1073741824 * 10 | round) == 31' \
	"ladder: vLLM holds 3.1 GiB, not its cap"
expect_jq '[.concurrent[] | select(.name=="vllm")][0] | (.cap_bytes / 1073741824 * 10 | round) == 598' \
	"ladder: its cap (59.8 GiB) is a key of its own"
run $NONV $S ladder $L --log "$FIX/oomlogs/vllm_startup.log" --tried 1
expect_out '4 other processes holding 51\.4 GiB' "ladder: 4 other processes holding 51.4 GiB (RSS), not 108.1 GiB (a cap counted)"
expect_no_out '0\.3 or lower' "ladder: one small-cap constant (no 0.3 beside 0.5)"
expect_out 'vllm .*0\.50 = 59\.8 GiB, holds 3\.1 GiB now: a small cap' "ladder: the judgement names the cap and what it holds"

# the metrics exposition: the same used
run $NONV $S metrics $L
expect_out '^sparkops_pool_used_bytes 7355[0-9]{7}$' "metrics: sparkops_pool_used_bytes is the same 68.5 GiB"

# the run summary: peak pool use is that 'used' (page cache excluded)
cd "$TMP" || exit 2
run $NONV $S run --interval 0.2 --summary sum.json $L -- sleep 0.5
expect_rc 0 "a short run on the fixture"
expect_err 'peak pool use 68\.5 GiB of 119\.7 GiB at [0-9:]+ \(page cache apart, at most 45\.0 GiB\)' \
	"summary: peak pool use 68.5 GiB, the same used as status (not 113.5 = total - free)"
OUT=sum.json
expect_jq '(.peak_pool_used_bytes / 1073741824 * 10 | round) == 685 and (.peak_page_cache_bytes / 1073741824 * 10 | round) == 450' \
	"summary JSON: peak_pool_used_bytes is used, peak_page_cache_bytes apart"
done_testing
