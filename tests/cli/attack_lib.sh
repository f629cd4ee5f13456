# SPDX-License-Identifier: MIT
# The output attack matrix (issue 24), shared by test_attack_outputs*.sh
# (sourced after lib.sh; each file runs a family of attacks): the output
# options from the tables ($TMP/matrix: CMD OPT KIND, $nopts of them), the
# case runner ($TMP/case.sh: one attack on one option in its own mount
# namespace on a private tmpfs) and attack_matrix, which runs the cases
# concurrently (they wait on the programs, not the CPU) and reports them in
# order. See test_attack_outputs.sh for the attacks.
S=$SPARKOPS

if [ "$(id -u)" != 0 ] || ! unshare -m sh -c 'mount -t tmpfs none /mnt 2>/dev/null || mount -t tmpfs none /tmp' 2>/dev/null ||
	! setpriv --reuid=nobody --regid=nogroup --clear-groups true 2>/dev/null; then
	skip_case "the output attack matrix" "needs root, unshare -m and setpriv (nobody)"
	done_testing
	exit 0
fi
chmod 711 "$TMP" # nobody walks to the case's folder (its own files stay root's)
cp -a "$FIX/gb10-idle" "$TMP/fx"
R="--procfs $TMP/fx/proc --sysfs $TMP/fx/sys"
LOG="$FIX/logs/short.csv"

# ---- the options, from the tables ------------------------------------------------------
cmds=$($S --help | awk '/^commands:/{on=1;next} on && /^   [a-z]/{print $1}')
: >"$TMP/matrix"
for c in $cmds; do
	$S "$c" --sparkops-options >"$TMP/o.$c" 2>/dev/null || continue
	awk -v c="$c" '$NF == "out" || $NF == "out-dir" { print c, $1, $NF }' "$TMP/o.$c" >>"$TMP/matrix"
done
nopts=$(wc -l <"$TMP/matrix" | tr -d ' ')

# ---- the case runner: one attack on one option, in a fresh namespace -------------------
cat >"$TMP/case.sh" <<'CASE'
# sh case.sh CMD OPT KIND ATTACK [PARTNER]: exit 0 held, 1 failed (why on stdout), 77 not applicable
CMD=$1 OPT=$2 KIND=$3 ATK=$4 PART=${5:-}
D="$TMP/ns"
mount -t tmpfs -o mode=755 none "$D" || { echo "no tmpfs"; exit 1; }
mkdir -m 1777 "$D/pub"
mkdir -m 700 "$D/secret"
echo precious >"$D/secret/victim"
mkdir -m 755 "$D/other"
echo theirs >"$D/other/v"
chown nobody:nogroup "$D/other/v"
cd "$D" || exit 1
NOB="setpriv --reuid=nobody --regid=nogroup --clear-groups"
PARENT="$D/pub"
long=0 # the output lives as long as the command (run, watch, metrics --interval)
case "$CMD" in run|watch) long=1 ;; metrics) long=1 ;; esac
# the path given and the file written
set_paths() {
	if [ "$KIND" = out-dir ]; then V="$PARENT"; F="$PARENT/sparkops.prom"; else V="$PARENT/out"; F="$V"; fi
}
set_paths
# invoke [slow]: the command with OPT=$V (slow: a run of several seconds)
invoke() {
	slow=${1:-}
	case "$CMD" in
	run)
		base="--log $D/base.csv"; [ "$OPT" = --log ] && base=""
		t=0.3; [ -n "$slow" ] && t=4
		set -- $S run $R --interval 0.1 $base $EXTRA "$OPT" "$V" -- sleep $t ;;
	watch)
		base="--log $D/base.csv"; [ "$OPT" = --log ] && base=""
		n=3; [ -n "$slow" ] && n=40
		set -- $S watch $R --count $n --interval 0.1 $base $EXTRA "$OPT" "$V" ;;
	report)
		set -- $S report "${INPUT:-$LOG}" $EXTRA "$OPT" "$V" ;;
	metrics)
		iv=""; [ -n "$slow" ] && iv="--interval 0.2"
		set -- $S metrics $R $iv $EXTRA "$OPT" "$V" ;;
	*) echo "no recipe for '$CMD': add one to tests/cli/attack_lib.sh"; exit 1 ;;
	esac
	if [ -n "$slow" ]; then
		"$@" >"$D/out" 2>"$D/err" &
		PID=$!
	else
		timeout 30 "$@" >"$D/out" 2>"$D/err"
		RC=$?
		[ "$RC" != 124 ] || { echo "hung (killed after 30s)"; exit 1; }
	fi
}
# wait for the background run $PID at most $1 seconds: 0 ended
wait_end() {
	i=0
	while kill -0 "$PID" 2>/dev/null; do
		i=$((i + 1))
		[ "$i" -gt $(($1 * 10)) ] && { kill -KILL "$PID"; return 1; }
		sleep 0.1
	done
	wait "$PID"
	RC=$?
	return 0
}
fail() { echo "$*"; sed 's/^/    err: /' "$D/err" | head -8; exit 1; }
said() { grep -Eq -- "$1" "$D/err" || fail "not said: /$1/"; }
secret_clean() { [ "$(ls "$D/secret")" = victim ] && [ "$(cat "$D/secret/victim")" = precious ] || fail "the root-only folder was written: $(ls "$D/secret")"; }
EXTRA=""
case "$ATK" in
absent)
	invoke
	[ -f "$F" ] && [ -s "$F" ] || fail "no file written at $F (rc $RC)" ;;
regular)
	echo old >"$F"
	invoke
	[ -f "$F" ] && [ -s "$F" ] && [ "$(cat "$F")" != old ] || fail "the file was not replaced (rc $RC)" ;;
symlink)
	ln -s "$D/secret/victim" "$F" && chown -h nobody "$F"
	invoke
	secret_clean
	[ -L "$F" ] || fail "the link was replaced"
	said "symbolic link" ;;
symparent)
	ln -s "$D/secret" "$D/pub/d" && chown -h nobody "$D/pub/d"
	PARENT="$D/pub/d"; set_paths
	invoke
	secret_clean
	said "symbolic link owned by nobody" ;;
swapparent)
	[ $long = 1 ] || exit 77
	mkdir "$D/pub/rd" && chown nobody "$D/pub/rd"
	PARENT="$D/pub/rd"; set_paths
	invoke slow
	sleep 1
	$NOB sh -c "mv '$D/pub/rd' '$D/pub/rd.old' && ln -s '$D/secret' '$D/pub/rd'" || fail "could not swap the folder"
	sleep 1
	kill -TERM "$PID" 2>/dev/null
	wait_end 10 || fail "no end 10s after SIGTERM"
	secret_clean ;;
block)
	mknod "$F" b 7 250
	invoke
	[ -b "$F" ] || fail "the block node was replaced"
	said "block device" ;;
char)
	mknod "$F" c 1 3 && chmod 666 "$F"
	invoke
	[ -c "$F" ] || fail "the char node was replaced"
	[ "$RC" = 0 ] || fail "exit $RC onto /dev/null" ;;
fifo)
	mkfifo "$F"
	cat "$F" >"$D/got" &
	R1=$!
	sleep 0.2
	invoke
	i=0; while kill -0 $R1 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	kill $R1 2>/dev/null
	[ -p "$F" ] || fail "the FIFO was replaced"
	[ -s "$D/got" ] || fail "the reader got nothing (rc $RC)"
	[ "$RC" = 0 ] || fail "exit $RC" ;;
stalled)
	mkfifo "$F"
	sleep 120 <"$F" &
	R1=$!
	head -c 1048576 /dev/zero >"$F" &
	W1=$!
	sleep 0.3 # the pipe is full; its reader never reads
	if [ $long = 1 ]; then
		invoke slow
		sleep 1.5
		kill -TERM "$PID" 2>/dev/null
		wait_end 15 || { kill $R1 $W1 2>/dev/null; fail "SIGTERM did not end it within 15s (a hang on the FIFO)"; }
	else
		invoke
	fi
	kill $R1 $W1 2>/dev/null
	[ -p "$F" ] || fail "the FIFO was replaced"
	said "dropped|stopped reading" ;;
folder)
	mkdir "$F"
	invoke
	[ -d "$F" ] && [ -z "$(ls -A "$F")" ] || fail "the folder was changed"
	said "[Ii]s a directory" ;;
full)
	mkdir "$D/pub/full" && mount -t tmpfs -o size=16k none "$D/pub/full" || fail "no small tmpfs"
	head -c 1048576 /dev/zero >"$D/pub/full/fill" 2>/dev/null
	PARENT="$D/pub/full"; set_paths
	invoke
	said "No space left"
	[ -z "$(ls "$D/pub/full" | grep '\.tmp\.')" ] || fail "a temp file was left: $(ls "$D/pub/full")" ;;
hardlink)
	ln "$D/other/v" "$F" || fail "could not link"
	invoke
	[ "$(cat "$D/other/v")" = theirs ] || fail "the other user's file was written"
	said "hard link" ;;
same)
	[ -n "$PART" ] || exit 77
	if [ "$PART" = LOG ]; then
		cp "$LOG" "$F"; INPUT="$F"; keep=$(cksum <"$F")
	else
		echo keep >"$F"; keep=$(cksum <"$F")
		EXTRA="$PART $F"
		# an input that is only read with the feature it belongs to
		[ "$PART" = --guard-stop-file ] && EXTRA="--guard-load $EXTRA"
	fi
	invoke
	[ "$RC" = 2 ] || fail "exit $RC, not 2 (usage)"
	said "same file|is the log itself"
	[ "$(cksum <"$F")" = "$keep" ] || fail "the file was changed" ;;
*) echo "unknown attack $ATK"; exit 1 ;;
esac
exit 0
CASE

# attack_matrix ATTACK... : every option of $TMP/matrix through each ATTACK
# (same: once per partner option or input of the command), ATTACK_JOBS
# (default 8) cases at a time, each in its own namespace with its own output
# files; one TAP line a case, in the matrix's order. Sets ran (the cases run)
# and na (not applicable).
attack_matrix() {
	: >"$TMP/cases"
	na=0
	while read -r c o k; do
		for a in "$@"; do
			parts=""
			if [ "$a" = same ]; then
				parts=$(awk -v o="$o" '($NF == "out" || $NF == "in") && $1 != o { print $1 }' "$TMP/o.$c")
				[ "$c" = report ] && parts="$parts LOG"
				[ -n "$parts" ] || { na=$((na + 1)); continue; }
			else
				parts="-"
			fi
			for p in $parts; do
				echo "$c $o $k $a $p" >>"$TMP/cases"
			done
		done
	done <"$TMP/matrix"
	[ -d "$TMP/ns" ] || mkdir "$TMP/ns"
	i=0
	while read -r c o k a p; do
		i=$((i + 1))
		[ "$p" = - ] && p=""
		(
			TMP="$TMP" S="$S" R="$R" LOG="$LOG" unshare -m sh "$TMP/case.sh" "$c" "$o" "$k" "$a" "$p" \
				>"$TMP/case.$i.out" 2>"$TMP/case.$i.err" </dev/null
			echo $? >"$TMP/case.$i.rc"
		) &
		# ATTACK_JOBS at a time: the batch ends before the next starts
		[ $((i % ${ATTACK_JOBS:-8})) != 0 ] || wait
	done <"$TMP/cases"
	wait
	ran=0
	i=0
	while read -r c o k a p; do
		i=$((i + 1))
		[ "$p" = - ] && p=""
		RC=none
		[ -f "$TMP/case.$i.rc" ] && read -r RC <"$TMP/case.$i.rc"
		if [ "$RC" = 77 ]; then
			na=$((na + 1))
			continue
		fi
		ran=$((ran + 1))
		# what a failed case said, for _report to show
		[ "$RC" = 0 ] || { cp "$TMP/case.$i.out" "$OUT"; cp "$TMP/case.$i.err" "$ERR"; }
		[ "$RC" = 0 ]
		_report $? "$c $o: $a${p:+ (with $p)}"
	done <"$TMP/cases"
	echo "# the output attack matrix ($*): $ran (option x attack) cases run over $nopts output options, $na not applicable"
}
