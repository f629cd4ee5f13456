#!/bin/sh
# SPDX-License-Identifier: MIT
# watch --pid: the summary says how the watch ended, as the log does.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS

# --- watch --pid: the summary says how the watch ended, as the log does ---------------
sleep 1 &
sp=$!
run env SPARKOPS_NVML_LIB=/nonexistent $S watch --pid $sp --interval 0.2 --log "$TMP/w.csv" --summary "$TMP/w.json" $(sysroot gb10-idle)
wait $sp
OUT=$TMP/w.json
expect_jq '.ended_by == "pid_ended"' "summary JSON: ended_by pid_ended, not null"
OUT=$TMP/w.csv
expect_out ',event,stop,reason=pid_ended' "the log says pid_ended"
OUT=$ERR
expect_out 'ended +by pid_ended' "the human summary says it too"

done_testing
