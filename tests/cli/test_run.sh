#!/bin/sh
# SPDX-License-Identifier: MIT
# sparkops run: pass-through, exit status, signals, the log and its failures.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
PC=$BUILD_DIR/progress_child
NONV="env SPARKOPS_NVML_LIB=/nonexistent/libnvidia-ml.so.1"
IDLE="--procfs $FIX/gb10-idle/proc --sysfs $FIX/gb10-idle/sys"
cd "$TMP" || exit 2
# wait_until CMD...: CMD succeeds within 10 s (polled every 0.1 s); its last status
wait_until() {
	i=0
	while ! "$@" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	"$@" 2>/dev/null
}

# --- usage --------------------------------------------------------------------------
run $S run --help
expect_rc 0 "run --help"
expect_out -- '--guard-min-free SIZE' "run --help lists the guard"
run $S run
expect_rc 2 "run without a command"
expect_err 'no command to run' "run without a command is explained"
run $S run --bogus -- true
expect_rc 2 "an unknown option"
expect_err "unknown option '--bogus'" "the unknown option is named"
run $S run --log
expect_err "option '--log' needs a value" "a missing value is named"
run $S run --interval 0 -- true
expect_rc 2 "--interval 0 is refused"
run $S run --slowdown 150 -- true
expect_rc 2 "--slowdown 150 is refused"
run $S run --progress-regex 'no group' -- true
expect_rc 2 "--progress-regex without a capture group"
expect_err 'exactly one capture group' "the missing group is explained"
run $S run --progress-regex '([' -- true
expect_rc 2 "--progress-regex that does not compile"

# --- exit status passthrough ------------------------------------------------------------
run $NONV $S run --log l0.csv -- true
expect_rc 0 "a job that succeeds"
expect_err 'summary:' "the summary is printed on stderr"
expect_err 'ended +by exit \(exit code 0\)' "the summary says how it ended"
run $NONV $S run --log l3.csv -- sh -c 'exit 3'
expect_rc 3 "the job's exit code is passed on"
run $NONV $S run --log l9.csv -- sh -c 'kill -9 $$'
expect_rc 137 "a job killed by SIGKILL: 128+9"
grep -q 'ended_by=signal exit_code=137 signal=9' l9.csv
_report $? "the exit row says signal 9"
run $NONV $S run --log l15.csv -- sh -c 'kill -TERM $$'
expect_rc 143 "a job killed by SIGTERM: 128+15"
run $NONV $S run --log lnf.csv -- ./no-such-command-here
expect_rc 127 "a command that does not exist: 127"
expect_err "'./no-such-command-here': command not found" "command not found is said"
printf '#!/bin/sh\n' >noexec.sh
chmod 644 noexec.sh
run $NONV $S run --log lne.csv -- ./noexec.sh
expect_rc 126 "a file that cannot be executed: 126"
run $NONV $S run --log largs.csv -- sh -c 'printf "[%s]" "$@"' x 'a b' '' '*' '--log'
expect_rc 0 "argv passed as-is"
expect_out '^\[a b\]\[\]\[\*\]\[--log\]$' "no shell: spaces, empty and glob arguments arrive exactly"

# --- byte-exact pass-through ----------------------------------------------------------------
head -c 300000 /dev/urandom >blob
printf 'a\rb\r\n\0c' >>blob
$NONV $S run --log lb.csv -- cat blob >bout 2>berr
cmp -s blob bout
_report $? "binary stdout passes through byte for byte"
# our own first line ("logging to ...") comes before the job's bytes, the
# summary after: the job writes once that line is out (it is written after
# the fork)
rm -f go2
$NONV $S run --log lb2.csv -- sh -c 'i=0; while [ ! -f go2 ] && [ $i -lt 300 ]; do sleep 0.05; i=$((i + 1)); done
	cat blob >&2' >bout2 2>berr2 &
sp=$!
wait_until grep -q 'logging to' berr2
: >go2
wait $sp
n=$(head -1 berr2 | wc -c)
tail -c +$((n + 1)) berr2 | head -c "$(wc -c <blob)" | cmp -s blob -
_report $? "binary stderr passes through byte for byte (the summary follows it)"
[ ! -s bout2 ]
_report $? "nothing of the job's stderr lands on stdout"
$NONV $S run --log lyes.csv -- yes 2>yerr | head -3 >yout
[ "$(wc -l <yout)" = 3 ] && grep -Eq 'ended +by signal \(signal 13' yerr
_report $? "a closed reader ends the job as it would without sparkops (SIGPIPE)"
echo "typed" | $NONV $S run --log lin.csv -- cat >inout 2>/dev/null
grep -qx typed inout
_report $? "stdin is the job's"

# the job inherits none of sparkops' own descriptors (log, signalfd, pipes, guard, endpoint)
sh -c 'ls /proc/$$/fd' </dev/null >fd_plain 2>/dev/null
$NONV $S run --log lfd.csv --guard-min-free 1K --metrics-listen 127.0.0.1:0 -- sh -c 'ls /proc/$$/fd' </dev/null >fd_run 2>/dev/null
cmp -s fd_plain fd_run
_report $? "the job's descriptors are the same as without sparkops"

# --- the log ----------------------------------------------------------------------------------
# (a 1.5 s job for the 3 samples asked below: under load 0.5 s gave 2)
run $NONV $S run --interval 0.1 --log lg.csv $IDLE -- $PC sleep 1.5
expect_rc 0 "a short job with 0.1 s samples"
expect_err "logging to 'lg.csv' every 0.1s" "the log is named at the start"
head -1 lg.csv | grep -q '^time,unix_time,type,event,detail,'
_report $? "the log starts with the header"
[ "$(grep -c ',sample,' lg.csv)" -ge 3 ]
_report $? "one row per sample"
sed -n 2p lg.csv | grep -Eq '^[0-9-]{10}T[0-9:]{8}\.[0-9]{3}[+-][0-9]{2}:[0-9]{2},[0-9]+\.[0-9]{3},event,start,'
_report $? "the start row: ISO-8601 with ms and offset, unix time"
tail -1 lg.csv | grep -q ',event,exit,ended_by=exit exit_code=0'
_report $? "the exit row ends the log"
awk -F, 'NR==1{for(i=1;i<=NF;i++)c[$i]=i} NR>2 && $3=="sample" && $c["job_rss_bytes"]+0 > 100000 {ok=1} END {exit !ok}' lg.csv
_report $? "job_rss_bytes is the job's resident memory"
( cd "$TMP" && mkdir dflt && cd dflt && $NONV $S run -- true 2>err >/dev/null; ls ) >dls
grep -Eq '^sparkops-[0-9]{8}-[0-9]{6}\.csv$' dls
_report $? "the default log is sparkops-YYYYmmdd-HHMMSS.csv in the working directory"

# a log that cannot be written: the job still runs and its status is kept
run $NONV $S run --log /nonexistent-dir/x.csv -- sh -c 'echo ran; exit 4'
expect_rc 4 "an unwritable log directory does not stop the job"
expect_out '^ran$' "the job ran"
expect_err "'/nonexistent-dir/x.csv': No such file or directory; the job runs without a log" "the log failure is said"
expect_err 'summary:' "the summary is still printed"
if [ -w /dev/full ]; then
	run $NONV $S run --interval 0.1 --log /dev/full -- $PC sleep 0.4
	expect_rc 0 "a full disk does not stop the job"
	expect_err "'/dev/full': No space left on device" "the full disk is said"
	[ "$(grep -c 'No space left' "$ERR")" -eq 1 ]
	_report $? "the full disk is said once, not every sample"
fi

# --- processes ------------------------------------------------------------------------------
run $NONV $S run --log lfork.csv -- sh -c '(sleep 30; echo late) >/dev/null 2>&1 & echo $! >bgpid; echo parent'
expect_rc 0 "a job that forks a background process and exits"
expect_out '^parent$' "its output came through"
bg=$(cat bgpid)
kill -0 "$bg" 2>/dev/null
_report $? "the background process it left goes on"
st=$(awk '{print $3}' /proc/"$bg"/stat 2>/dev/null)
[ "$st" != Z ]
_report $? "and is not a zombie"
kill "$bg" 2>/dev/null

# sparkops killed: the job goes on and its output still arrives. The job
# says it started (a file) and goes on only once sparkops is dead (another
# file), so the kill lands while it runs, however slowly sparkops starts
# (ASan, a loaded machine); each wait is bounded
rm -f started goon marker
$NONV $S run --log lk.csv -- sh -c 'echo $$ >started; i=0
	while [ ! -f goon ] && [ $i -lt 300 ]; do sleep 0.05; i=$((i + 1)); done
	echo survived; echo done >marker' >kout 2>/dev/null &
sp=$!
wait_until [ -s started ]
kill -9 $sp
wait $sp 2>/dev/null
: >goon
wait_until [ -f marker ]
_report $? "killing sparkops does not kill the job"
wait_until grep -qx survived kout
_report $? "the job's output still reaches the terminal after sparkops died"

# --- signals -----------------------------------------------------------------------------------
rm -f sout
$NONV $S run --log ls.csv -- $PC trap 5 >sout 2>serr &
sp=$!
i=0
while ! grep -q ready sout 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
kill -TERM $sp
wait $sp
RC=$?
[ $RC = 7 ]
_report $? "SIGTERM to sparkops is forwarded; the job's own exit code comes back (exit 7)"
grep -q 'INT=0 TERM=1 HUP=0' sout
_report $? "the job got exactly one SIGTERM"

rm -f sout
$NONV $S run --log lh.csv -- $PC trap 5 >sout 2>serr &
sp=$!
i=0
while ! grep -q ready sout 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
kill -HUP $sp
wait $sp
grep -q 'INT=0 TERM=0 HUP=1' sout
_report $? "SIGHUP is forwarded"

# Ctrl-C at a terminal: the tty signals the whole foreground group; no second copy
if command -v python3 >/dev/null 2>&1; then
	cat >ctrlc.py <<'PY'
import os, pty, sys, time, select
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
buf = b""
end = time.time() + 10
sent = False
while time.time() < end:
    r, _, _ = select.select([fd], [], [], 0.1)
    if r:
        try:
            d = os.read(fd, 4096)
        except OSError:
            break
        if not d:
            break
        buf += d
    if not sent and b"ready" in buf:
        os.write(fd, b"\x03")
        sent = True
_, st = os.waitpid(pid, 0)
sys.stdout.write(buf.decode("utf-8", "replace"))
print("EXIT=%d" % os.waitstatus_to_exitcode(st))
PY
	run python3 ctrlc.py env SPARKOPS_NVML_LIB=/nonexistent $S run --log lc.csv -- $PC trap 5
	expect_out 'INT=1 TERM=0 HUP=0' "Ctrl-C reaches the job once"
	expect_out 'EXIT=7' "and sparkops exits with the job's status"
fi
done_testing
