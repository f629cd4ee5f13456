#!/bin/sh
# SPDX-License-Identifier: MIT
# The guard never takes the whole machine or another user's processes for
# the job: watch --pid 1 (or a tree holding another user's process) with a
# guard is refused at the start, naming one (pid, user, name), exit 2, unless
# --force; run's guard leaves such processes alone and says so once.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
NONV="env SPARKOPS_NVML_LIB=/nonexistent/libnvidia-ml.so.1"
R="--procfs $FIX/gb10-idle/proc --sysfs $FIX/gb10-idle/sys"
cd "$TMP" || exit 2
W="$NONV $S watch --count 1 --interval 0.1 --log /dev/null $R"

run $S watch --help
expect_out "--force " "watch --help lists --force"
run $S run --help
expect_out "--force " "run --help lists --force"

run $W --pid 1 --guard-min-free 1GiB
expect_rc 2 "watch --pid 1 --guard-min-free is refused"
expect_err "^sparkops: --pid 1: the guard would signal .*pid 1 \(user root, init\).*add --force" \
	"the refusal names pid 1, its user and init, and --force"
run $W --pid 1 --guard-psi-full 50
expect_rc 2 "watch --pid 1 --guard-psi-full is refused too"
run $W --pid 1 --guard-min-free 1GiB --force
expect_rc 0 "--force lets it watch"
run $W --pid 1
expect_rc 0 "watch --pid 1 without a guard: only watched, not refused"

if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1; then
	# a root shell with a child of nobody's
	sh -c 'setpriv --reuid=nobody --regid=nogroup --clear-groups sleep 30 & echo $! >nb.pid; wait' &
	P=$!
	i=0
	while [ ! -s nb.pid ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	sleep 0.2
	NB=$(cat nb.pid)
	run $W --pid $P --guard-min-free 1GiB
	expect_rc 2 "a tree holding another user's process is refused"
	expect_err "pid $NB \(user nobody, (setpriv|sleep)\)" "the refusal names it: pid, user, name (setpriv until its exec)"
	kill "$NB" 2>/dev/null
	wait $P 2>/dev/null

	mkdir -m 1777 pw
	chmod 755 "$TMP"
	# run: the guard fires (a floor above the fixture's MemFree) and spares nobody's process
	# (the name is the one the guard saw: setpriv after its setresuid and before its exec,
	# sh before its own exec on a slow build, then sleep)
	rm -f pw/nb2.pid
	run $NONV $S run --guard-min-free 500GiB --guard-grace 1 --interval 0.1 --log g.csv $R -- \
		sh -c 'setpriv --reuid=nobody --regid=nogroup --clear-groups sh -c "echo \$\$ >pw/nb2.pid; exec sleep 8" & sleep 8'
	NB2=$(cat pw/nb2.pid 2>/dev/null)
	expect_err "guard: left alone 1 process not the job's own \(pid $NB2, user nobody, (setpriv|sh|sleep)\); --force includes them" \
		"run's guard says it left nobody's process alone"
	[ -n "$NB2" ] && kill -0 "$NB2" 2>/dev/null
	_report $? "nobody's process is still running after the guard stopped the job"
	[ -n "$NB2" ] && kill "$NB2" 2>/dev/null
	rm -f pw/nb2.pid
	run $NONV $S run --force --guard-min-free 500GiB --guard-grace 1 --interval 0.1 --log g2.csv $R -- \
		sh -c 'setpriv --reuid=nobody --regid=nogroup --clear-groups sh -c "echo \$\$ >pw/nb2.pid; exec sleep 8" & sleep 8'
	NB2=$(cat pw/nb2.pid 2>/dev/null)
	sleep 0.3
	[ -n "$NB2" ] && ! kill -0 "$NB2" 2>/dev/null
	_report $? "with --force the guard stops it too"
	! grep -q "left alone" "$ERR"
	_report $? "... and says nothing of leaving it"
else
	skip_case "another user's process in the tree" "needs root and setpriv"
fi
done_testing
