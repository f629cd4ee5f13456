#!/bin/sh
# SPDX-License-Identifier: MIT
# sparkops' own messages start a line of their own, also when stderr is a
# file (nohup job >log 2>&1) and the job left its tqdm line open: the
# warning is never glued onto the bar.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
PC=$BUILD_DIR/progress_child
SC="$(cd "$(dirname "$0")/../fake-nvml/scenarios" && pwd)"
if [ -n "$SPARKOPS_UNDER_QEMU" ]; then
	skip_case "messages on their own line" "'run' starts threads (qemu-user)"
	done_testing
	exit $?
fi
cd "$TMP" || exit 2
# the GPU falls off the bus at 1 s: a warning while the bar is open
env SPARKOPS_NVML_LIB="$FAKE_NVML" FAKE_NVML_SCENARIO="$SC/lost-midrun.scn" \
	$S run --interval 0.25 --log l.csv -- $PC tqdm 3 99 3 2.5 >job.log 2>&1
RC=$?
[ "$RC" = 0 ]
_report $? "the job ran (exit $RC)"
grep -q '^sparkops: warning: the GPU stopped answering' job.log
_report $? "the warning starts its own line in the log file"
! grep -q 'it/s, loss=0.5\]sparkops:' job.log
_report $? "the warning is not glued onto the bar's text"
grep -q 'it/s, loss=0.5\]' job.log
_report $? "the bar's own text is kept in the file"
# stdout and stderr to one file: the same
env SPARKOPS_NVML_LIB="$FAKE_NVML" FAKE_NVML_SCENARIO="$SC/lost-midrun.scn" \
	$S run --quiet --interval 0.25 --log l2.csv -- $PC tqdm 3 99 3 2.5 >job2.log 2>&1
grep -q '^sparkops: warning: the GPU stopped answering' job2.log
_report $? "--quiet: the warning still starts its own line"
done_testing
