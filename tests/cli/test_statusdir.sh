#!/bin/sh
# SPDX-License-Identifier: MIT
# The running job's status folder (how top sees run/watch): a folder another
# user made, or one group or others may write, is refused and said once by
# run/watch and by top, never a silent blind top. The per-user fallback
# /tmp/sparkops-UID is tried inside `unshare -m` on a private /tmp.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
NONV="env SPARKOPS_NVML_LIB=/nonexistent/libnvidia-ml.so.1"
R="--procfs $FIX/gb10-loaded/proc --sysfs $FIX/gb10-loaded/sys"
cd "$TMP" || exit 2
# the status folder's own fallbacks (XDG_RUNTIME_DIR, /tmp/sparkops-UID) are what this tests
unset SPARKOPS_RUN_DIR
chmod 755 "$TMP"

# our own folder, 0700: used, no warning
mkdir -p rt0
run env XDG_RUNTIME_DIR=$TMP/rt0 $NONV $S run --log l0.csv -- true
expect_rc 0 "a job with a status folder of our own"
expect_no_out "status folder refused" "no warning for our own folder"
! grep -q "status folder refused" "$ERR"
_report $? "... none on stderr"

if [ "$(id -u)" = 0 ]; then
	mkdir -p rt1/sparkops
	chown nobody rt1/sparkops
	run env XDG_RUNTIME_DIR=$TMP/rt1 $NONV $S run --log l1.csv -- true
	expect_rc 0 "a status folder another user owns: the job still runs"
	expect_err "^sparkops: .*status folder refused: '$TMP/rt1/sparkops' is owned by uid [0-9]+, not by us" \
		"run says the folder is another user's"
	[ "$(grep -c 'status folder refused' "$ERR")" = 1 ]
	_report $? "... once"
else
	skip_case "a status folder another user owns" "needs root to make one"
fi
mkdir -p rt2/sparkops
chmod 777 rt2/sparkops
run env XDG_RUNTIME_DIR=$TMP/rt2 $NONV $S run --log l2.csv -- true
expect_rc 0 "a world-writable status folder: the job still runs"
expect_err "status folder refused: '$TMP/rt2/sparkops' is writable by group or others" "run says it is writable by others"
[ -z "$(ls rt2/sparkops)" ]
_report $? "nothing is published into it"
chmod 770 rt2/sparkops
run env XDG_RUNTIME_DIR=$TMP/rt2 $NONV $S watch --duration 0.3 --interval 0.1 --log w2.csv $R
expect_err "status folder refused: .* writable by group or others" "watch says it too (group-writable)"

# /tmp/sparkops-UID made by another user before ours, on a private /tmp
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null 2>&1 && command -v setpriv >/dev/null 2>&1 &&
	unshare -m true 2>/dev/null; then
	NB=$(id -u nobody)
	# the binary goes onto a private tmpfs first: a build that lives under
	# /tmp (a clone there) would be hidden by the private /tmp
	cat >"$TMP/inns.sh" <<EOF2
mount -t tmpfs tmpfs /mnt || exit 9
cp "$S" /mnt/sparkops && chmod 755 /mnt/sparkops || exit 9
mount -t tmpfs tmpfs /tmp || exit 9
mkdir /tmp/sparkops-$NB && chmod 755 /tmp/sparkops-$NB
setpriv --reuid=nobody --regid=nogroup --clear-groups env -u XDG_RUNTIME_DIR SPARKOPS_NVML_LIB=/nonexistent \
	/mnt/sparkops run --log /dev/null -- true 2>&1
EOF2
	run unshare -m sh "$TMP/inns.sh"
	expect_out "status folder refused: '/tmp/sparkops-$NB' is owned by uid 0, not by us \(uid $NB\)" \
		"/tmp/sparkops-UID pre-made by root (as another user): nobody's run says so"
else
	skip_case "/tmp/sparkops-UID made by another user" "needs root, unshare -m and setpriv"
fi

# top: the same refusal on its screen, and on stderr when it ends
if command -v tmux >/dev/null 2>&1; then
	SOCK="$TMP/tmux.sock"
	tm() { tmux -S "$SOCK" -f /dev/null "$@"; }
	trap 'tm kill-server 2>/dev/null; rm -rf "$TMP"' EXIT
	chmod 777 rt2/sparkops
	tm new-session -d -s t -x 100 -y 30 \
		"env LANG=C.UTF-8 TERM=screen-256color XDG_RUNTIME_DIR=$TMP/rt2 SPARKOPS_NVML_LIB=/nonexistent \
$S top --interval 0.2 $R 2>$TMP/top.err; echo rc=\$? >$TMP/top.rc; sleep 600"
	i=0
	while [ $i -lt 100 ]; do
		tm capture-pane -p -t t >"$OUT"
		grep -q 'status folder refused' "$OUT" && break
		sleep 0.1
		i=$((i + 1))
	done
	expect_out "status folder refused" "top shows the refused status folder on its screen"
	tm send-keys -t t q
	i=0
	while [ $i -lt 50 ] && [ ! -s "$TMP/top.rc" ]; do sleep 0.1; i=$((i + 1)); done
	grep -q "status folder refused: '$TMP/rt2/sparkops' is writable by group or others" "$TMP/top.err"
	_report $? "top says it on stderr when it ends"
	tm kill-server 2>/dev/null
else
	skip_case "top and a refused status folder" "tmux is not installed"
fi
done_testing
