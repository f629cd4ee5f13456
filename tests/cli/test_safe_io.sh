#!/bin/sh
# SPDX-License-Identifier: MIT
# Issue 16, I/O safety: nothing sparkops (run as root) writes or reads can be
# turned against the machine. Cases that need device nodes run in a private
# mount namespace (unshare -m) on a tmpfs with nodes made by mknod: the real
# /dev is never written. Non-root cases run as 'nobody'.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
LOG="$FIX/logs/short.csv"
IDLE=$(sysroot gb10-idle)

skip() { # name reason
	T_N=$((T_N + 1))
	echo "ok $T_N - $1 # SKIP $2"
}

# ns 'SCRIPT' : runs SCRIPT (sh) in a private mount namespace where $D is a
# tmpfs holding null (1,3), full (1,7), a FIFO 'fifo' and a sticky, world-
# writable folder 'pub' (like /tmp); stdout/stderr/exit as run()
D="$TMP/dev"
mkdir "$D"
NS=0
if [ "$(id -u)" = 0 ] && unshare -m sh -c "mount -t tmpfs none '$D'" 2>/dev/null; then
	NS=1
fi
ns() {
	unshare -m sh -c "mount -t tmpfs none '$D' && mknod '$D/null' c 1 3 && mknod '$D/full' c 1 7 &&
		chmod 666 '$D/null' '$D/full' && mkfifo '$D/fifo' && mkdir -m 1777 '$D/pub' && cd '$D' &&
		export S='$S' I='$IDLE' LOG='$LOG' D='$D' TMP='$TMP' && { $1
}" >"$OUT" 2>"$ERR"
	RC=$?
}
AS_NOBODY=""
if [ "$(id -u)" = 0 ] && setpriv --reuid=nobody --regid=nogroup --clear-groups true 2>/dev/null; then
	AS_NOBODY="setpriv --reuid=nobody --regid=nogroup --clear-groups"
fi

# ---- 1. an output path that is a device is written, never replaced ---------------------

if [ $NS = 1 ]; then
	ns '$S report "$LOG" --svg "$D/null" && test -c "$D/null" && echo still-a-device'
	expect_rc 0 "report --svg onto a char device"
	expect_out still-a-device "report --svg: /dev/null stays a device"

	ns '$S report "$LOG" --html "$D/null" && test -c "$D/null" && echo still-a-device'
	expect_out still-a-device "report --html: /dev/null stays a device"

	ns '$S watch $I --count 1 --interval 0.1 --log "$TMP/w.csv" --summary "$D/null"; echo rc=$?;
	    test -c "$D/null" && echo still-a-device'
	expect_out 'rc=0' "watch --summary onto a char device (exit 0)"
	expect_out still-a-device "watch --summary: /dev/null stays a device"

	ns '$S run $I --interval 0.1 --log "$TMP/r.csv" --summary "$D/null" -- true; echo rc=$?;
	    test -c "$D/null" && echo still-a-device'
	expect_out 'rc=0' "run --summary onto a char device"
	expect_out still-a-device "run --summary: /dev/null stays a device"

	ns '$S report "$LOG" --svg "$D/full" --html "$TMP/page.html"; echo rc=$?; test -c "$D/full" && echo still-a-device'
	expect_out 'rc=5' "report --svg /dev/full: exit 5"
	expect_err "full'?: No space left on device" "report --svg /dev/full: a clear message"
	expect_out still-a-device "report --svg /dev/full: still a device"
	[ -s "$TMP/page.html" ]
	_report $? "report --svg /dev/full: the --html page is still written"

	ns '$S watch $I --count 1 --interval 0.1 --log "$TMP/w2.csv" --summary "$D/full"; echo rc=$?'
	expect_out 'rc=5' "watch --summary /dev/full: exit 5"
	expect_err "No space left on device" "watch --summary /dev/full: a clear message"
	[ "$(wc -l <"$TMP/w2.csv")" -ge 2 ]
	_report $? "watch --summary /dev/full: the log is intact"

	# a FIFO without a reader fails at once; with one, it gets the chart
	ns 'timeout 10 $S report "$LOG" --svg "$D/fifo"; echo rc=$?'
	expect_out 'rc=5' "report --svg onto a FIFO with no reader: exit 5, no hang"
	expect_err "FIFO with no reader" "FIFO with no reader: a clear message"
	ns 'cat "$D/fifo" >"$TMP/fifo.out" & sleep 0.3; timeout 10 $S report "$LOG" --svg "$D/fifo"; echo rc=$?; wait;
	    test -p "$D/fifo" && echo still-a-fifo'
	expect_out 'rc=0' "report --svg onto a FIFO with a reader"
	expect_out still-a-fifo "the FIFO stays a FIFO"
	grep -q '<svg' "$TMP/fifo.out"
	_report $? "the FIFO's reader got the chart"

	# a link planted by another user is not followed
	ns 'echo precious >"$D/victim"; ln -s "$D/victim" "$D/pub/chart.svg"; chown -h nobody "$D/pub/chart.svg";
	    $S report "$LOG" --svg "$D/pub/chart.svg"; echo rc=$?; cat "$D/victim"'
	expect_out 'rc=5' "a symlink owned by another user: refused (exit 5)"
	expect_err "symbolic link owned by nobody" "the refusal names the path's owner"
	expect_out precious "the link's target is untouched"
	ns 'echo old >"$D/victim"; ln -s "$D/victim" "$D/mine.svg"; $S report "$LOG" --svg "$D/mine.svg"; echo rc=$?;
	    test -L "$D/mine.svg" && echo still-a-link; grep -c "<svg" "$D/victim"'
	expect_out 'rc=0' "the caller's own symlink is followed"
	expect_out still-a-link "the link itself is kept"
	expect_out '^1$' "the link's target got the chart"
	ns 'mkdir -m 777 "$D/open"; chown nobody "$D/open"; ln -s "$D/victim" "$D/open/x.svg";
	    $S report "$LOG" --svg "$D/open/x.svg"; echo rc=$?'
	expect_out 'rc=5' "a root-owned link in another user's folder: refused"
	expect_err "folder owned by nobody" "the refusal names the folder's owner"

	# mode kept, temp files gone
	ns 'umask 022; echo x >"$D/keep.svg"; chmod 640 "$D/keep.svg"; $S report "$LOG" --svg "$D/keep.svg" &&
	    stat -c %a "$D/keep.svg"; $S report "$LOG" --svg "$D/new.svg" && stat -c %a "$D/new.svg"; ls -a "$D"'
	expect_out '^640$' "an existing file keeps its mode"
	expect_out '^644$' "a new file gets 0644"
	expect_no_out '\.tmp\.' "no temp file left behind"

	# root replacing another user's file: it stays theirs
	ns 'echo x >"$D/theirs.svg"; chown nobody:nogroup "$D/theirs.svg"; $S report "$LOG" --svg "$D/theirs.svg" &&
	    stat -c "%U:%G %a" "$D/theirs.svg"; grep -c "<svg" "$D/theirs.svg"'
	expect_out '^nobody:nogroup 644$' "root replacing nobody's file: the new file is still nobody's"
	expect_out '^1$' "... and holds the chart"
else
	skip "device outputs" "needs root and unshare -m (a private tmpfs for device nodes)"
fi

# - and /dev/stdout are standard output, for root and for nobody
run $S report "$LOG" --svg -
expect_rc 0 "report --svg -"
expect_out '<svg' "report --svg -: the chart on stdout"
run sh -c "$S report '$LOG' --svg /dev/stdout | cat"
expect_out '<svg' "report --svg /dev/stdout into a pipe"
if [ -n "$AS_NOBODY" ]; then
	run sh -c "$AS_NOBODY $S report '$LOG' --svg /dev/stdout | cat; echo rc=\$?"
	expect_out '<svg' "as nobody: report --svg /dev/stdout into a pipe"
	run sh -c "$AS_NOBODY $S report '$LOG' --html - | cat"
	expect_out '<html' "as nobody: report --html - into a pipe"
else
	skip "as nobody" "needs root and setpriv"
fi

# ---- 2. the log: no symlink followed; the default name never taken twice ------------------

echo precious >"$TMP/victim"
ln -s "$TMP/victim" "$TMP/planted.csv"
run $S watch $IDLE --count 1 --interval 0.1 --log "$TMP/planted.csv"
expect_rc 2 "--log onto a symbolic link: refused"
expect_err "planted.csv' is a symbolic link: not following it" "--log symlink: a clear message"
[ "$(cat "$TMP/victim")" = precious ]
_report $? "--log symlink: the link's target is untouched"

mkdir "$TMP/same"
(cd "$TMP/same" && for i in 1 2 3; do $S watch $IDLE --count 1 --interval 0.1 >/dev/null 2>&1 & done; wait)
n=$(ls "$TMP/same" | grep -c '^sparkops-[0-9]\{8\}-[0-9]\{6\}\(-[0-9]*\)\?\.csv$')
RC=$n
[ "$n" = 3 ]
_report $? "three watches started together: three default logs ($n)"

# ---- 3. --log X --summary X is a usage error ----------------------------------------------

printf 'old log\n' >"$TMP/x.csv"
run $S watch $IDLE --count 1 --interval 0.1 --log "$TMP/x.csv" --summary "$TMP/x.csv"
expect_rc 2 "--log X --summary X"
expect_err "are the same file" "--log X --summary X: a clear message"
run $S run $IDLE --interval 0.1 --log "$TMP/x.csv" --summary "$TMP/./x.csv" -- true
expect_rc 2 "run --log X --summary ./X"
ln "$TMP/x.csv" "$TMP/hard.json"
run $S watch $IDLE --count 1 --interval 0.1 --log "$TMP/x.csv" --summary "$TMP/hard.json"
expect_rc 2 "--log X --summary (a hard link to X)"
[ "$(cat "$TMP/x.csv")" = "old log" ]
_report $? "the log is untouched"
run $S watch $IDLE --count 1 --interval 0.1 --log "$TMP/new.csv" --summary "$TMP/./new.csv"
expect_rc 2 "--log X --summary ./X, neither there yet"

# ---- 4. the ladder's state: the caller's own folder, one writer at a time ---------------

export XDG_STATE_HOME="$TMP/state"
unset SPARKOPS_RUN_DIR # the XDG/HOME state folder itself is tested here (in $TMP: still sealed)
LAD="$S ladder $IDLE"
i=1
while [ $i -le 40 ]; do
	$LAD --job pair$i --tried 1 >/dev/null 2>&1 &
	$LAD --job pair$i --tried 2 >/dev/null 2>&1 &
	i=$((i + 1))
done
wait
kept=$(grep -l '^tried 1,2$' "$XDG_STATE_HOME"/sparkops/ladder-pair*.state 2>/dev/null | wc -l)
RC=$kept
[ "$kept" = 40 ]
_report $? "40 concurrent pairs of --tried marks: all kept ($kept of 40)"

if [ "$(id -u)" = 0 ]; then
	export XDG_STATE_HOME="$TMP/st-other"
	mkdir -p "$XDG_STATE_HOME/sparkops"
	printf 'version 1\njob j\ntried 1,2,3\nproposed 4\n' >"$XDG_STATE_HOME/sparkops/ladder-j.state"
	chown -R nobody "$XDG_STATE_HOME/sparkops"
	run $LAD --job j --json
	expect_rc 0 "a state folder of another user: the ladder still answers"
	expect_err "sparkops' belongs to nobody \(uid [0-9]+\), not to you: not using it" "another user's state folder: refused, the owner named"
	expect_jq '.rungs_tried == [] and .next_rung == 1' "another user's state is not read"
	chown -R root "$XDG_STATE_HOME/sparkops"
	chmod 777 "$XDG_STATE_HOME/sparkops"
	run $LAD --job j --json
	expect_err "is writable by everyone \(mode 0777\)" "a world-writable state folder: refused"
	expect_jq '.rungs_tried == []' "a world-writable folder's state is not read"
	chmod 700 "$XDG_STATE_HOME/sparkops"
	chown nobody "$XDG_STATE_HOME/sparkops/ladder-j.state"
	run $LAD --job j --json
	expect_err "ladder-j.state' belongs to nobody" "another user's state file: refused"
	expect_jq '.rungs_tried == []' "another user's state file is not read"
	[ "$(stat -c %U "$XDG_STATE_HOME/sparkops/ladder-j.state")" = nobody ]
	_report $? "another user's state file is not replaced"
	rm -rf "$XDG_STATE_HOME"
	mkdir -p "$XDG_STATE_HOME" "$TMP/elsewhere"
	ln -s "$TMP/elsewhere" "$XDG_STATE_HOME/sparkops"
	run $LAD --job j --json
	expect_err "is not a folder \(a symbolic link\?\)" "a symlinked state folder: refused"
	[ -z "$(ls "$TMP/elsewhere")" ]
	_report $? "nothing written through the symlinked folder"
else
	skip "state folder ownership" "needs root to make files of another user"
fi

# ---- 5. a FIFO under --procfs/--sysfs is an unknown reading, never a hang ---------------

cp -r "$FIX/gb10-idle" "$TMP/fifo-root"
R="$TMP/fifo-root"
rm "$R/proc/meminfo" "$R/sys/class/hwmon/hwmon0/temp1_input"
mkfifo "$R/proc/meminfo" "$R/sys/class/hwmon/hwmon0/temp1_input"
FR="--procfs $R/proc --sysfs $R/sys"
run timeout 20 $S status $FR --json
[ "$RC" != 124 ]
_report $? "status with FIFOs for meminfo and a hwmon file: no hang"
expect_jq '.pool.status != "ok" and .pool.total_bytes == null' "the FIFO meminfo: the pool is unknown (null), not 0"
expect_jq '[.hwmon[] | select(.hwmon == 0 and .channel == 1)][0].temp_c == null' "the FIFO hwmon file: unknown (null), not 0"
run timeout 20 $S watch $FR --count 2 --interval 0.1 --log "$TMP/fifo.csv"
[ "$RC" != 124 ]
_report $? "watch --count 2 with FIFOs: no hang"
expect_rc 0 "watch --count 2 with FIFOs: finishes"
# a FIFO that a reader cannot open without blocking: SIGTERM still ends status
rm "$R/proc/meminfo"
mkfifo "$R/proc/meminfo"
$S status $FR >/dev/null 2>&1 &
pid=$!
sleep 0.5
kill -TERM $pid 2>/dev/null
i=0
while kill -0 $pid 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
RC=0
kill -0 $pid 2>/dev/null && RC=1 && kill -KILL $pid
wait $pid 2>/dev/null
[ $RC = 0 ]
_report $? "status with a FIFO meminfo is done (or ends on SIGTERM) within 5 s"

done_testing
