#!/bin/sh
# SPDX-License-Identifier: MIT
# The guard of 'watch --pid ANCESTOR' never signals sparkops nor the processes
# above it: the rest of the tree is stopped.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/jobs_lib.sh"

# --- watch --pid ANCESTOR: the guard never signals sparkops nor the processes above it ------
# A shell starts a job (sleep) and then watches itself: 'watch --pid $$'. The
# fixture's MemFree (92 GiB) is under a 200 GiB floor, so the guard acts.
sh -c 'sleep 30 & echo $! >kid.pid
	'"$NONV $S"' watch --pid $$ --interval 0.2 --duration 3 --guard-min-free 200G --guard-confirm 0.5s --guard-grace 0.5 \
		--log anc.csv '"$IDLE"' 2>anc.err
	echo $? >anc.rc
	echo alive >anc.shell' &
shp=$!
wait_for test -s kid.pid
kid=$(cat kid.pid)
t0=$(date +%s)
while ! [ -s anc.rc ] && kill -0 $shp 2>/dev/null && [ $(($(date +%s) - t0)) -lt 15 ]; do sleep 0.1; done
[ -n "$kid" ] && wait_for gone "$kid"
_report $? "the job (the shell's sleep) was stopped by the guard"
kill $kid 2>/dev/null
wait $shp 2>/dev/null
[ "$(cat anc.shell 2>/dev/null)" = alive ]
_report $? "watch --pid \$\$: the watching shell (sparkops' parent) survives the guard"
[ "$(cat anc.rc 2>/dev/null)" = 0 ] && tail -1 anc.csv | grep -q ',event,stop,reason=duration'
_report $? "sparkops was not signalled: it ran its --duration and wrote its stop row"
grep -q ',event,guard_term,signal=15 processes=1 ' anc.csv
_report $? "SIGTERM went to the job alone (1 process: the shell's sleep)"
grep -q 'is an ancestor of sparkops: the guard signals the rest of its tree' anc.err
_report $? "the start says the ancestor is left out"

done_testing
