#!/bin/sh
# SPDX-License-Identifier: MIT
# sparkops watch: the same sampling without a child; --duration, --pid, Ctrl-C.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
PC=$BUILD_DIR/progress_child
NONV="env SPARKOPS_NVML_LIB=/nonexistent/libnvidia-ml.so.1"
SC="$(cd "$(dirname "$0")/../fake-nvml/scenarios" && pwd)"
IDLE="--procfs $FIX/gb10-idle/proc --sysfs $FIX/gb10-idle/sys"
cd "$TMP" || exit 2

run $S watch --help
expect_rc 0 "watch --help"
expect_out -- '--pid PID' "watch --help lists --pid"
run $S watch extra
expect_rc 2 "watch takes no command"
run $S watch --pid abc
expect_rc 2 "a bad --pid"
run $S watch --pid 4000000 --log nopid.csv
expect_rc 2 "--pid of a process that does not exist"
expect_err '--pid 4000000: no such process' "the missing process is named"
run $S watch --duration 0
expect_rc 2 "--duration 0 is refused"

# (1.5 s for the 4 samples asked below: a loaded machine may starve it)
run env SPARKOPS_NVML_LIB=$FAKE_NVML FAKE_NVML_SCENARIO=$SC/gb10.scn $S watch --interval 0.1 --duration 1.5 \
	--log w.csv --summary w.json $IDLE
expect_rc 0 "watch --duration ends by itself"
expect_err 'summary:' "with the summary"
grep -q ',event,start,interval=0.1 ' w.csv && tail -1 w.csv | grep -q ',event,stop,reason=duration'
_report $? "start and stop rows"
[ "$(grep -c ',sample,' w.csv)" -ge 4 ]
_report $? "samples in between"
grep -q ',event,reason_on,sw_power_cap,' w.csv && grep -q ',event,reason_on,sw_thermal_slowdown,' w.csv
_report $? "reasons already on at the start are events"
awk -F, '$3=="sample" && $18=="84" {ok=1} END {exit !ok}' w.csv
_report $? "the GPU temperature is in the log"
awk -F, 'NR==1{for(i=1;i<=NF;i++)c[$i]=i} $3=="sample" && $c["job_rss_bytes"]=="" {ok=1} END {exit !ok}' w.csv
_report $? "no job: job_rss_bytes is empty, not 0"
OUT=w.json
expect_jq '.episodes == [] and .guard_actions == []' "summary JSON without a job"

run $NONV $S watch --interval 0.05 --count 3 --log c.csv $IDLE
expect_rc 0 "watch --count ends after N samples"
[ "$(grep -c ',sample,' c.csv)" = 3 ] && tail -1 c.csv | grep -q ',event,stop,reason=count count=3'
_report $? "exactly three samples, and a stop row that says why"
run $S watch --count 0
expect_rc 2 "--count 0 is refused"

# tied to a process: its memory, its end (3 s: an ASan watch on a loaded
# machine took its first sample over a second late, and a process that has
# ended holds no memory)
$PC sleep 3 &
pid=$!
run $NONV $S watch --interval 0.1 --pid $pid --log p.csv
expect_rc 0 "watch --pid ends when the process ends"
tail -1 p.csv | grep -q ",event,stop,reason=pid_ended pid=$pid"
_report $? "the stop row says the process ended"
awk -F, 'NR==1{for(i=1;i<=NF;i++)c[$i]=i} $3=="sample" && $c["job_rss_bytes"]+0 > 0 {ok=1} END {exit !ok}' p.csv
_report $? "job_rss_bytes is the process's memory"
wait $pid

# Ctrl-C / SIGTERM: a clean end
$NONV $S watch --interval 0.1 --log i.csv >/dev/null 2>ierr &
sp=$!
i=0
while ! grep -q ',sample,' i.csv 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
kill -INT $sp
wait $sp
RC=$?
[ $RC = 0 ]
_report $? "SIGINT ends watch with exit 0"
grep -q 'summary:' ierr && tail -1 i.csv | grep -q ',event,stop,reason=signal signal=2'
_report $? "the summary is printed and the stop row says why"
done_testing
