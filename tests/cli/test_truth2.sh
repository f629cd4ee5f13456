#!/bin/sh
# SPDX-License-Identifier: MIT
# "Every message true", the second part: Trainer dicts without a bar give a
# throughput (epoch/h); watch --follow reads a training log as tail -F does
# (from its end, through rotation and truncation) into the same parser, so
# a slowdown of a job started elsewhere (tmux) is seen; the live status line.
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
# be under the baseline, and the samples after it to reach the slow pace
awk -F, 'NR==1{for(i=1;i<=NF;i++)c[$i]=i} $3=="event" && $4=="episode_start" {if (match($0, /rate=[0-9.]+/)) r=substr($0, RSTART+5, RLENGTH-5)+0} END {exit !(r>=40 && r<=100)}' f.csv
_report $? "--follow: the episode's rate is under the baseline, toward the slow pace"
slow_after_episode f.csv 2
_report $? "--follow: after the episode starts, the samples show the slow pace (about 60 epoch/h)"

# --- the live status line: on a terminal (tmux), redrawn in place, off the
# job's own lines; not with --quiet, not when stderr is not a terminal
JOBSH="echo job-line-1; sleep 1.2; echo job-line-2; sleep 1.2; echo job-line-3; sleep 0.6"
if command -v tmux >/dev/null 2>&1; then
	# tmux_run NAME OPTS: sparkops run in a 120x20 tmux pane; the pane is
	# captured every 0.1 s into NAME.N until the run is over
	tmux_run() {
		sock=sp$$$1
		tmux -L "$sock" -f /dev/null new-session -d -x 120 -y 20 \
			"env SPARKOPS_NVML_LIB=/nonexistent NO_COLOR=1 XDG_RUNTIME_DIR=$XDG_RUNTIME_DIR $S run --interval 0.2 $2 --log $1.csv $ROOT -- sh -c '$JOBSH'; echo RUN-OVER; sleep 60"
		_i=0
		while [ $_i -lt 600 ]; do
			tmux -L "$sock" capture-pane -p -S -200 >"$1.$_i" 2>/dev/null
			grep -q RUN-OVER "$1.$_i" && break
			sleep 0.1
			_i=$((_i + 1))
		done
		cp "$1.$_i" "$1.final"
		tmux -L "$sock" kill-server 2>/dev/null
	}
	tmux_run live ""
	cat live.[0-9]* | grep -Eo '^sparkops [0-9]+m[0-9]+s \|' | sort -u >live.seen
	[ "$(wc -l <live.seen)" -ge 2 ]
	_report $? "status line: shown on a terminal and redrawn (the elapsed time moves)"
	ok=0
	for f in live.[0-9]*; do
		[ "$(grep -Ec '^sparkops [0-9]+m[0-9]+s \|' "$f")" -le 1 ] || ok=1
	done
	_report $ok "status line: one line, redrawn in place (never two on screen)"
	grep -Eq '^sparkops [0-9]+m[0-9]+s \| pool free [0-9.]+ / budget [0-9.]+ GiB \| ' live.[0-9]*
	_report $? "status line: elapsed, pool free and budget"
	OUT=live.final
	expect_out '^job-line-1$' "status line: the job's first line intact"
	expect_out '^job-line-2$' "status line: the job's second line intact"
	expect_out '^job-line-3$' "status line: the job's third line intact"
	expect_no_out '^sparkops [0-9]+m[0-9]+s \|' "status line: cleared at the end"
	expect_out '^summary:' "status line: the summary on a line of its own"
	tmux_run quiet "--quiet"
	! grep -Eq 'sparkops [0-9]+m[0-9]+s \|' quiet.[0-9]* quiet.final
	_report $? "--quiet: no status line"
	OUT=quiet.final
	expect_out '^job-line-2$' "--quiet: the job's lines"
else
	skip_case "status line tests need tmux"
fi
env SPARKOPS_NVML_LIB=/nonexistent $S run --interval 0.2 --log nt.csv $ROOT -- sh -c "$JOBSH" >nt.out 2>nt.err
! grep -Eq 'sparkops [0-9]+m[0-9]+s|'"$(printf '\033')"'\[K' nt.err
_report $? "stderr not a terminal (2>file): no status line"
OUT=nt.out
expect_out '^job-line-3$' "stderr not a terminal: the job's lines on stdout"

# a missing --follow file is waited for
run $S watch --follow nothere.log --count 1 --interval 0.1 --log m.csv $ROOT
expect_rc 0 "--follow FILE that does not exist yet: the watch waits for it"
done_testing
