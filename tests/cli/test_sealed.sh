#!/bin/sh
# SPDX-License-Identifier: MIT
# SPARKOPS_RUN_DIR: one root for every file sparkops keeps of its own on the
# machine (lib.sh sets it for the whole suite). The ladder's state and a
# watch's status file go under it, and the XDG folders are not used.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
IDLE=$(sysroot gb10-idle)
R=$SPARKOPS_RUN_DIR

run env XDG_STATE_HOME="$TMP/xdg-state" HOME="$TMP/home" $S ladder $IDLE --job sealed --tried 1 --json
expect_jq '.rungs_tried == [1]' "ladder remembers a rung with SPARKOPS_RUN_DIR set"
[ -f "$R/state/ladder-sealed.state" ] && [ ! -e "$TMP/xdg-state" ] && [ ! -e "$TMP/home" ]
_report $? "the ladder's state is under \$SPARKOPS_RUN_DIR/state, not XDG_STATE_HOME nor HOME"
[ "$(stat -c %a "$R/state")" = 700 ]
_report $? "the state folder is made 0700"
run env XDG_STATE_HOME="$TMP/xdg-state" $S ladder $IDLE --job sealed --json
expect_jq '.rungs_tried == [1]' "and read back from there"
run env SPARKOPS_RUN_DIR=relative XDG_STATE_HOME="$TMP/xdg-state" $S ladder $IDLE --job sealed --json
expect_jq '.rungs_tried == []' "a relative SPARKOPS_RUN_DIR is no root (the XDG folder, empty)"

# a watch: its status file appears under $R/run while it samples (waited on,
# not slept for), not under $XDG_RUNTIME_DIR, and is gone at its end
env SPARKOPS_NVML_LIB=/nonexistent $S watch $IDLE --interval 0.1 --count 600 --quiet --log "$TMP/w.csv" >/dev/null 2>&1 &
wp=$!
i=0
while [ ! -f "$R/run/$wp" ] && [ $i -lt 200 ] && kill -0 $wp 2>/dev/null; do
	sleep 0.05
	i=$((i + 1))
done
[ -f "$R/run/$wp" ] && grep -q '^mode=watch$' "$R/run/$wp" && [ ! -e "$XDG_RUNTIME_DIR/sparkops/$wp" ]
_report $? "a watch's status file is \$SPARKOPS_RUN_DIR/run/PID, not in XDG_RUNTIME_DIR"
kill -INT $wp
wait $wp
RC=$?
expect_rc 0 "the watch ends cleanly on SIGINT"
[ ! -e "$R/run/$wp" ]
_report $? "its status file is removed at exit"

done_testing
