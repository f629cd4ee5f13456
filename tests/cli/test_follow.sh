#!/bin/sh
# SPDX-License-Identifier: MIT
# watch --follow reads a training log as tail -F does (from its end, through
# rotation and truncation) into the progress parser: Trainer dicts without a
# bar give a throughput (epoch/h), and a slowdown of a job started elsewhere
# is an episode; a --follow file that does not exist yet is waited for.
# Driven by state (files the test creates), polled with generous deadlines.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
cd "$TMP" || exit 2
ROOT="--procfs $FIX/gb10-idle/proc --sysfs $FIX/gb10-idle/sys"

# wait_for CMD...: until CMD succeeds, or 60 s
wait_for() {
	_i=0
	until "$@"; do
		[ $_i -lt 600 ] || return 1
		sleep 0.1
		_i=$((_i + 1))
	done
}
rows_with() {
	_n=$(grep -c "$2" "$1" 2>/dev/null)
	[ "${_n:-0}" -ge "$3" ]
}
# an episode has started and, after it, N samples show the slow pace (40-80 epoch/h)
slow_after_episode() {
	awk -F, -v want="$2" 'NR==1{for(i=1;i<=NF;i++)c[$i]=i} $3=="event" && $4=="episode_start" {ep=1}
		ep && $3=="sample" && $c["throughput_unit"]=="epoch/h" && $c["throughput"]>=40 && $c["throughput"]<=80 {n++}
		END {exit !(n>=want)}' "$1" 2>/dev/null
}

# --- watch --follow: a fake trainer appends a dict every 0.3 s (0.01 epoch:
# 120 epoch/h); every 0.6 s (60 epoch/h) once the file 'slow' exists
cat >trainer.sh <<'SH'
i=0
pace=0.3
while [ ! -e stop ]; do
	[ -e slow ] && pace=0.6
	i=$((i + 1))
	printf "{'loss': 1.%03d, 'grad_norm': 0.5, 'learning_rate': 2e-05, 'epoch': %d.%02d}\n" $((i % 1000)) $((i / 100)) $((i % 100)) >>train.log
	sleep $pace
done
SH
printf '%s\n' "{'loss': 9.9, 'epoch': 0.0}" "history before the watch" >train.log
sh trainer.sh &
tp=$!
env SPARKOPS_NVML_LIB=/nonexistent $S watch --pid $tp --follow train.log --interval 0.2 --baseline-window 1.5 \
	--log f.csv $ROOT >f.out 2>f.err &
wp=$!
wait_for rows_with f.csv ',epoch/h' 8
# rotation (the name now names a new file), then truncation
mv train.log train.log.1
wait_for test -s train.log
sleep 0.5
: >train.log
sleep 0.5
: >slow
# not the first episode_start: on a loaded box the trainer's own jitter can
# start one before the slow pace; wait until the slow pace shows after one
wait_for slow_after_episode f.csv 2
: >stop
wait $tp
wait $wp
RC=$?
expect_rc 0 "watch --pid --follow ends with the trainer"
awk -F, 'NR==1{for(i=1;i<=NF;i++)c[$i]=i} $3=="sample" && $c["throughput_unit"]=="epoch/h" && $c["throughput"]>=90 && $c["throughput"]<=150 {n++} END {exit !(n>=3)}' f.csv
_report $? "--follow: Trainer dicts give epoch/h (0.01 epoch per 0.3 s is about 120)"
OUT=f.csv
expect_out ',event,episode_start,"?cause=unknown ' "--follow: the slowdown (after a rotation and a truncation) is an episode"
OUT=f.err
expect_out 'slowdown: [0-9.]+ epoch/h is [0-9]+% under the [0-9.]+ epoch/h baseline' "--follow: said on stderr in epoch/h"
# the episode starts as the rolling rate crosses under the baseline: on a
# loaded box that can be mid-way down (90 of 120), so its rate is checked to
# be under the baseline, and the samples after it to reach the slow pace;
# a starved trainer (stress-suite: 36.8) writes late, so the rolling rate
# can dip under the slow pace (60) itself: 20 is the floor, not 40
awk -F, 'NR==1{for(i=1;i<=NF;i++)c[$i]=i} $3=="event" && $4=="episode_start" {if (match($0, /rate=[0-9.]+/)) r=substr($0, RSTART+5, RLENGTH-5)+0} END {exit !(r>=20 && r<=100)}' f.csv
_report $? "--follow: the episode's rate is under the baseline, toward the slow pace"
slow_after_episode f.csv 2
_report $? "--follow: after the episode starts, the samples show the slow pace (about 60 epoch/h)"
# a missing --follow file is waited for
run $S watch --follow nothere.log --count 1 --interval 0.1 --log m.csv $ROOT
expect_rc 0 "--follow FILE that does not exist yet: the watch waits for it"

done_testing
