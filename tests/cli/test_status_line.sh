#!/bin/sh
# SPDX-License-Identifier: MIT
# run's live status line: on a terminal (tmux), redrawn in place, off the
# job's own lines; not with --quiet, not when stderr is not a terminal.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
cd "$TMP" || exit 2
ROOT="--procfs $FIX/gb10-idle/proc --sysfs $FIX/gb10-idle/sys"

# --- the live status line: on a terminal (tmux), redrawn in place, off the
# job's own lines; not with --quiet, not when stderr is not a terminal
JOBSH="echo job-line-1; sleep 1.2; echo job-line-2; sleep 1.2; echo job-line-3; sleep 0.6"
if command -v tmux >/dev/null 2>&1; then
	# tmux_run NAME OPTS: sparkops run in a 120x20 tmux pane; the pane is
	# captured every 0.1 s into NAME.N until the run is over
	tmux_run() {
		sock=sp$$$1
		tmux -L "$sock" -f /dev/null new-session -d -x 120 -y 20 \
			"env SPARKOPS_NVML_LIB=/nonexistent NO_COLOR=1 XDG_RUNTIME_DIR=$XDG_RUNTIME_DIR SPARKOPS_RUN_DIR=$SPARKOPS_RUN_DIR $S run --interval 0.2 $2 --log $1.csv $ROOT -- sh -c '$JOBSH'; echo RUN-OVER; sleep 60"
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

done_testing
