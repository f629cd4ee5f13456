#!/bin/sh
# SPDX-License-Identifier: MIT
# ladder --apply 1 refuses while a job is watched: only a real sparkops (its
# /proc/PID/exe is our own file) counts as a watcher, not a process merely
# named 'sparkops run'.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/jobs_lib.sh"

# --- ladder --apply 1: an impostor named 'sparkops run' is not a watcher --------------------
# The watcher scan runs over a tree whose process entries are links to the
# live /proc (so /proc/PID/exe is real) while drop_caches is a plain file:
# the real page cache is never flushed here.
if [ "$(id -u)" = 0 ]; then
	cp -r "$FIX/gb10-idle" lw
	mkdir -p lw/proc/sys/vm imp
	: >lw/proc/sys/vm/drop_caches
	export XDG_STATE_HOME="$TMP/state"
	L="$S ladder --procfs $TMP/lw/proc --sysfs $TMP/lw/sys --job low"
	# the impostor: a copy of sh named 'sparkops' running the script './run'
	# (comm 'sparkops', argv 'sparkops run', an unprivileged user's process)
	cp "$(readlink -f /bin/sh)" imp/sparkops
	printf 'sleep 30\nexit 0\n' >imp/run
	chmod 755 imp imp/sparkops imp/run
	(cd imp && exec setpriv --reuid=65534 --regid=65534 --clear-groups ./sparkops run) &
	imp=$!
	wait_for grep -qx sparkops "/proc/$imp/comm"
	tr '\0' ' ' <"/proc/$imp/cmdline" | grep -q '^\./sparkops run $'
	_report $? "the impostor runs: comm 'sparkops', argv 'sparkops run'"
	ln -s "/proc/$imp" "lw/proc/$imp"
	run $L --apply 1 --json
	expect_rc 0 "--apply 1 is not refused because of a process merely named 'sparkops run'"
	[ "$(cat lw/proc/sys/vm/drop_caches)" = 3 ]
	_report $? "the flush went ahead (3 written to the tree's drop_caches)"
	kill "$imp" 2>/dev/null
	wait "$imp" 2>/dev/null
	rm "lw/proc/$imp"

	# a real 'sparkops run' still makes it refuse
	: >lw/proc/sys/vm/drop_caches
	$NONV $S run --interval 0.2 --log real.csv $IDLE -- sleep 5 >/dev/null 2>&1 &
	rp=$!
	wait_for grep -q ',event,start,' real.csv
	ln -s "/proc/$rp" "lw/proc/$rp"
	run $L --apply 1 --json --reset
	expect_rc 1 "--apply 1 refuses while a real 'sparkops run' watches a job"
	expect_err "is watching a job \(pid $rp\)" "the refusal names the real watcher"
	[ ! -s lw/proc/sys/vm/drop_caches ]
	_report $? "refused: nothing written"
	# and on the live /proc too (refused before any flush)
	run $S ladder --job low-live --apply 1 --json
	expect_rc 1 "live /proc: --apply 1 refuses while a real 'sparkops run' watches a job"
	expect_err "is watching a job" "live /proc: the refusal says why"
	kill "$rp" 2>/dev/null
	wait "$rp" 2>/dev/null
	rm "lw/proc/$rp"
	unset XDG_STATE_HOME
else
	echo "# skip: ladder --apply 1 needs root (running as uid $(id -u))"
fi

done_testing
