#!/bin/sh
# SPDX-License-Identifier: MIT
# SIGTERM / SIGINT end 'sparkops run' promptly, with the job gone and the exit
# row last in the log, also with a hung driver; the guard's flush cannot block
# on a FIFO.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/jobs_lib.sh"

# --- SIGTERM / SIGINT end 'sparkops run' promptly: the job gone, the exit row last -----------
# term_case NAME SIG WANT_RC ENV... : start 'sparkops run -- sleep 30' (with
# ENV before it), send SIG once the first sample is in the log, and check
# that it ends within 5 s with the job's status, the job gone and the exit
# row the log's last. A watchdog SIGKILLs it after 20 s so a hang fails,
# not blocks, the suite.
now_ms() { date +%s%3N; }
term_case() {
	name=$1 sig=$2 want=$3
	shift 3
	env $DEFSIG "$@" $S run --interval 0.2 --log "$name.csv" $IDLE -- sleep 30 >/dev/null 2>"$name.err" &
	sp=$!
	wait_for grep -q ',sample,' "$name.csv"
	# the blocked-guard case: the guard has warned and, 0.1 s later, is in its flush
	[ -n "$WAIT_ERR" ] && wait_for grep -q "$WAIT_ERR" "$name.err" && sleep 0.5
	kid=$(sed -n 's/.*,event,start,.* pid=\([0-9]*\) .*/\1/p' "$name.csv")
	(sleep 20; kill -KILL $sp 2>/dev/null) &
	dog=$!
	t0=$(now_ms)
	kill -"$sig" $sp
	wait $sp
	RC=$?
	ms=$(($(now_ms) - t0))
	kill $dog 2>/dev/null
	wait $dog 2>/dev/null
	[ "$RC" = "$want" ] && [ $ms -lt 5000 ]
	_report $? "$name: SIG$sig ends sparkops run in ${ms} ms with the job's status $want"
	[ -n "$kid" ] && wait_for gone "$kid"
	_report $? "$name: the job (pid ${kid:-?}) is gone"
	tail -1 "$name.csv" | grep -q ",event,exit,ended_by=signal exit_code=$want signal="
	_report $? "$name: the log ends with the exit row"
	grep -q 'summary:' "$name.err"
	_report $? "$name: the summary is printed"
	[ -n "$kid" ] && kill -KILL "$kid" 2>/dev/null
}
# a command started with '&' by a script ignores SIGINT, and so would the
# job (sparkops passes the signal on; the job decides): reset it to default
DEFSIG=
env --default-signal=INT true 2>/dev/null && DEFSIG=--default-signal=INT
term_case term TERM 143 SPARKOPS_NVML_LIB=/nonexistent/libnvidia-ml.so.1
if [ -n "$DEFSIG" ]; then
	term_case int INT 130 SPARKOPS_NVML_LIB=/nonexistent/libnvidia-ml.so.1
else
	echo "# skip: SIGINT case: this env has no --default-signal (a background job ignores SIGINT)"
fi
# a read that never returns (the driver hangs in every power query): SIGTERM still ends it
term_case hung TERM 143 SPARKOPS_NVML_LIB=$FAKE_NVML FAKE_NVML_SCENARIO=$SC/hang.scn
# the guard's flush cannot block on a FIFO: drop_caches is a FIFO nobody
# reads; every open of the roots is non-blocking and refuses what is not a
# regular file (util/fileio.c sp_open_proc), so the flush fails at once, is
# said, and the guard goes on to stop the job (its own thread is still waited
# for at most 1 s at the end, for a sync() that never returns)
if [ "$(id -u)" = 0 ]; then
	cp -r "$FIX/gb10-idle" ff
	mkdir -p ff/proc/sys/vm
	mkfifo ff/proc/sys/vm/drop_caches
	t0=$(now_ms)
	SPARKOPS_NVML_LIB=/nonexistent/libnvidia-ml.so.1 timeout -s KILL 30 $S run --interval 0.2 --log fifoguard.csv \
		--procfs "$TMP/ff/proc" --sysfs "$TMP/ff/sys" --guard-min-free 200G --guard-flush --guard-grace 1 \
		-- sleep 30 >/dev/null 2>fifoguard.err
	RC=$?
	ms=$(($(now_ms) - t0))
	[ "$RC" != 137 ] && [ $ms -lt 15000 ]
	_report $? "fifoguard: a FIFO as drop_caches does not block the guard (ended in ${ms} ms, exit $RC)"
	grep -q 'guard: page cache flush failed' fifoguard.err
	_report $? "fifoguard: the failed flush is said"
	tail -1 fifoguard.csv | grep -q ',event,exit,'
	_report $? "fifoguard: the log ends with the exit row"
else
	echo "# skip: the blocked-guard case needs root (--guard-flush)"
fi

done_testing
