#!/bin/sh
# SPDX-License-Identifier: MIT
# sparkops run: a job whose tqdm rate falls at a known moment, with evidence
# from the fake NVML and fixture trees; each slowdown gets the right cause.
# Throughput parsing from Trainer dicts and a user regex; the JSON summary.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
PC=$BUILD_DIR/progress_child
SC="$(cd "$(dirname "$0")/../fake-nvml/scenarios" && pwd)"
cd "$TMP" || exit 2

# the job: 10 it/s until the test's cue (the file 'slow'), then 5 it/s for 3 s.
# Driven by state, not by the clock: the test waits until every run has its
# baseline, puts the evidence in place, then cues the slowdown.
JOB="$PC tqdm 10 @$TMP/slow 5 3"
FAST="--interval 0.15 --baseline-window 0.6"
# wait_rows LOG N: until LOG has N sample rows at 10 it/s (a generous deadline)
wait_rows() {
	_i=0
	while _n=$(grep -c ',sample,.*,10.0000,it/s' "$1" 2>/dev/null); [ "${_n:-0}" -lt "$2" ] && [ $_i -lt 600 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
}

# fixture trees we may change while the job runs
cp -r "$FIX/gb10-idle" thermal
cp -r "$FIX/gb10-idle" power
cp -r "$FIX/gb10-idle" memory
cp -r "$FIX/gb10-idle" none
root() { echo "--procfs $TMP/$1/proc --sysfs $TMP/$1/sys"; }

# thermal: NVML's sw_thermal_slowdown turns on at 1.5 s and the GPU warms
grep -v -e '^temp' -e '^reasons' -e '^viol' "$SC/gb10.scn" >thermal.scn
cat >>thermal.scn <<'SCN'
temp 0 @0-3 70..88
reasons 0 0
reasons 0 @1.5 0x20
viol_thermal 0 0
viol_power 0 0
SCN
env SPARKOPS_NVML_LIB=$FAKE_NVML FAKE_NVML_SCENARIO=$TMP/thermal.scn \
	$S run $FAST --log th.csv --summary th.json $(root thermal) -- $JOB >th.out 2>th.err &
p1=$!
# power: the spbm PL1 average reaches its 140 W cap (no NVML at all)
env SPARKOPS_NVML_LIB=/nonexistent $S run $FAST --log pw.csv $(root power) -- $JOB >pw.out 2>pw.err &
p2=$!
# memory: PSI memory climbs
env SPARKOPS_NVML_LIB=/nonexistent $S run $FAST --log mem.csv $(root memory) -- $JOB >mem.out 2>mem.err &
p3=$!
# nothing: no evidence anywhere
env SPARKOPS_NVML_LIB=/nonexistent $S run $FAST --log none.csv $(root none) -- $JOB >none.out 2>none.err &
p4=$!
# the baseline window (0.6 s) is over in each run: 8 samples at 10 it/s
for l in th pw mem none; do wait_rows $l.csv 8; done
# and the thermal reason (on at 1.5 s of the fake NVML's clock) is on
i=0
while ! grep -q ',event,reason_on,sw_thermal_slowdown,' th.csv && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
echo 139600000 >power/sys/class/hwmon/hwmon1/power11_average
printf 'some avg10=35.00 avg60=12.00 avg300=3.00 total=9123456\nfull avg10=12.00 avg60=4.00 avg300=1.00 total=3000000\n' \
	>memory/proc/pressure/memory
: >"$TMP/slow"
wait $p1 $p2 $p3 $p4

check() { # log err cause name
	OUT=$1
	ERR=$2
	RC=0
	expect_out ",event,episode_start,\"?cause=$3 " "$4: the episode is in the log with cause $3"
	expect_err "slowdown: 5 it/s is 50% under the 10 it/s baseline: $3" "$4: one stderr line says $3"
}
check th.csv th.err thermal "thermal reason"
check pw.csv pw.err power_cap "PL1 at its cap"
OUT=pw.err
expect_out "sustained power limit \(PL1\).*not a reason to retune the batch size" "power cap: said to be the platform's limit, not a batch problem"
check mem.csv mem.err memory_pressure "PSI memory"
check none.csv none.err unknown "no evidence"
OUT=th.csv
expect_out ',event,reason_on,sw_thermal_slowdown,' "the thermal reason turning on is an event row"
[ "$(grep -c ',event,episode_start,' th.csv)" = 1 ]
_report $? "one episode, not one per sample"
OUT=th.json
expect_jq '.episodes | length == 1' "summary JSON: one episode"
expect_jq '.episodes[0].cause == "thermal" and (.episodes[0].start | type) == "number"' "summary JSON: its cause and start"
expect_jq '.ended_by == "exit" and .exit_code == 0' "summary JSON: ended_by and exit_code"
expect_jq '.peak_pool_used_bytes > 0 and .guard_actions == []' "summary JSON: peak pool use, no guard actions"
OUT=th.err
expect_out 'slowdowns? .*thermal' "the stderr summary lists the episode"
# report tells the same story from the log
if $S report --help >/dev/null 2>&1; then
	$S report th.csv >rep.txt 2>&1
	tr '\r' '\n' <th.err | sed -n '/^summary:/,$p' >sum.txt
	cmp -s rep.txt sum.txt
	_report $? "'sparkops report' on the log prints the summary run printed"
fi
for f in th pw mem none; do cat $f.out; done >all.out
[ ! -s all.out ]
_report $? "the job's stdout stays empty (the bars are on stderr)"
tr '\r' '\n' <th.err | grep -c 'it/s, loss' >nbars
[ "$(cat nbars)" -ge 20 ]
_report $? "the tqdm redraws reach the terminal"

# Trainer log dicts: the live rate (epoch/h from successive dicts) is the
# last throughput; the final train_samples_per_second is the run's mean and
# does not replace it
run env SPARKOPS_NVML_LIB=/nonexistent $S run --interval 0.1 --log hf.csv -- $PC hf 6
expect_rc 0 "a Trainer-style job"
expect_out "'train_samples_per_second': 41.25" "its dicts pass through"
awk -F, 'NR==1{for(i=1;i<=NF;i++)c[$i]=i} $3=="sample" && $c["throughput_unit"]!="" {u=$c["throughput_unit"]} END {exit u!="epoch/h"}' hf.csv
_report $? "the last throughput is the live rate (epoch/h), not the end-of-training mean"
! awk -F, 'NR==1{for(i=1;i<=NF;i++)c[$i]=i} $3=="sample" && $c["throughput_unit"]=="samples/s" {ok=1} END {exit !ok}' hf.csv
_report $? "the end-of-training mean never lands in the throughput column once a live rate was seen"

# a user regex
run env SPARKOPS_NVML_LIB=/nonexistent $S run --interval 0.1 --log re.csv --progress-regex 'speed=([0-9.]+)' -- \
	sh -c 'for i in 1 2 3 4 5; do echo "step $i speed=7.5 ex/s"; sleep 0.1; done'
expect_rc 0 "a job with a custom progress format"
awk -F, 'NR==1{for(i=1;i<=NF;i++)c[$i]=i} $3=="sample" && $c["throughput"]=="7.5000" && $c["throughput_unit"]=="rate" {ok=1} END {exit !ok}' re.csv
_report $? "--progress-regex: the capture group is the rate"
# --metrics-listen: the loop's latest sample and the job's state, over HTTP
if command -v curl >/dev/null 2>&1; then
	run $S run --metrics-listen nowhere -- true
	expect_rc 2 "a bad --metrics-listen address"
	rm -f "$TMP/slow"
	env SPARKOPS_NVML_LIB=/nonexistent $S run $FAST --log ml.csv --metrics-listen 127.0.0.1:0 $(root none) -- \
		$PC tqdm 10 @$TMP/slow 5 3 >/dev/null 2>ml.err &
	sp=$!
	i=0
	while ! grep -q 'metrics at http' ml.err 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	url=$(sed -n 's/.*metrics at \(http[^ ]*\).*/\1/p' ml.err | head -1)
	# poll_metrics FILE RE: until the endpoint's page matches RE (a generous deadline)
	poll_metrics() {
		_i=0
		while :; do
			curl -s "$url" >"$1"
			grep -Eq "$2" "$1" && break
			[ $_i -lt 300 ] || break
			sleep 0.1
			_i=$((_i + 1))
		done
	}
	poll_metrics m1.txt '^sparkops_job_throughput_per_second\{.*\} 10$'
	wait_rows ml.csv 8 # the baseline is set: now the slowdown
	: >"$TMP/slow"
	poll_metrics m2.txt '^sparkops_job_slowdown_episodes_total.* 1$'
	wait $sp
	OUT=m1.txt
	expect_out '^sparkops_job_throughput_per_second\{.*\} 10$' "--metrics-listen: the job's throughput"
	expect_out '^sparkops_memory_|^sparkops_pool_|^sparkops_.*_bytes' "--metrics-listen: the sample's families"
	OUT=m2.txt
	expect_out '^sparkops_job_slowdown_cause\{.*cause="unknown".*\} 1' "--metrics-listen: the slowdown cause while it lasts"
	expect_out '^sparkops_job_slowdown_episodes_total.* 1$' "--metrics-listen: the episode count"
fi
done_testing
