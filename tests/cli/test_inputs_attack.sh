#!/bin/sh
# SPDX-License-Identifier: MIT
# The input attack matrix: every file a user names as input, through every
# attack, generated from two lists (INPUTS x ATTACKS). Each case must end
# within a deadline (a FIFO with no writer never hangs it), with a
# documented exit code (2: the input is refused, with one 'sparkops:' line
# on stderr) and never a crash (no exit >= 128, no SIGBUS). A file truncated
# while it is read may also be read whole first (exit 0), or after the cut
# (ladder: exit 3, the rows left show no memory failure). Prints the number
# of cases run. Non-root safe; nothing outside $TMP is touched.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
NONV="env SPARKOPS_NVML_LIB=/nonexistent/libnvidia-ml.so.1"
R="--procfs $FIX/gb10-idle/proc --sysfs $FIX/gb10-idle/sys"
cd "$TMP" || exit 2
export XDG_STATE_HOME="$TMP/state" XDG_RUNTIME_DIR="$TMP/rt"
mkdir -p "$TMP/state" "$TMP/rt" "$TMP/a"
DEADLINE=15

# INPUTS: name | suffix the file needs | command (@ is the path, % its folder)
INPUTS="report-log||$S report @
report-training-log||$S report $FIX/logs/short.csv --training-log @
ladder-log||$S ladder --log @ --job m
watch-follow||$NONV $S watch --follow @ --count 1 --interval 0.1 --log /dev/null $R
plan-gguf|.gguf|$NONV $S plan @ $R
plan-config|.json|$NONV $S plan @ $R
plan-folder-config|/config.json|$NONV $S plan % $R
plan-folder-shard|/model.safetensors|$NONV $S plan % $R
serve-web-config|.yml|$NONV $S serve --listen 127.0.0.1:0 --web-config @ $R
run-web-config|.yml|$NONV $S run --metrics-listen 127.0.0.1:0 --web-config @ --log /dev/null $R -- true"
ATTACKS="fifo devzero sparse truncated nul symloop folder"

# a large text log of valid rows: what "truncated while read" cuts
big() {
	[ -s "$TMP/big.csv" ] && return
	head -1 "$FIX/logs/short.csv" >"$TMP/big.csv"
	# 400,000 sample rows a second apart (about 80 MB): cut while it is read
	sed -n '/,sample,/{p;q}' "$FIX/logs/short.csv" |
		awk -F, -v OFS=, '{ t = $2; for (i = 0; i < 400000; i++) { $2 = sprintf("%.3f", t + i); print } }' \
			>>"$TMP/big.csv"
}

# make ATTACK SUFFIX -> the path (echoed); the truncating loop is started by the caller
make_attack() {
	p="$TMP/a/$1$2"
	rm -rf "$p"
	mkdir -p "$(dirname "$p")"
	# a shard beside a real config.json
	case $2 in /model.safetensors) cp "$FIX/models/bad-shard/config.json" "$(dirname "$p")/" ;; esac
	case $1 in
	fifo) mkfifo "$p" ;;
	devzero) ln -s /dev/zero "$p" ;;
	sparse) : >"$p" && truncate -s 64G "$p" ;;
	truncated) big && cp "$TMP/big.csv" "$p" ;;
	nul) head -c 1000 /dev/zero >"$p" ;;
	symloop) ln -s "$p" "$p" ;;
	folder) mkdir "$p" ;;
	esac
	echo "$p"
}

cases=0
echo "$INPUTS" | while IFS='|' read -r name suffix cmd; do
	for atk in $ATTACKS; do
		p=$(make_attack "$atk" "$suffix")
		c=$(echo "$cmd" | sed "s|@|$p|g; s|%|$(dirname "$p")|g")
		tp=""
		if [ "$atk" = truncated ]; then
			# cut it while it is read: to 1 MiB, then to a piece of its first
			# line (not to nothing: an empty web config is a valid one, and a
			# slow build that opens it after the cut would then serve)
			(sleep 0.05; truncate -s 1M "$p"; sleep 0.05; truncate -s 64 "$p") &
			tp=$!
		fi
		t0=$(date +%s)
		# shellcheck disable=SC2086
		timeout -s KILL $DEADLINE $c </dev/null >"$OUT" 2>"$ERR"
		RC=$?
		t1=$(date +%s)
		[ -n "$tp" ] && wait "$tp"
		ok=1
		case "$RC:$atk" in
		137:*) why="hung (killed after ${DEADLINE}s)" ;;
		2:*) grep -q '^sparkops: ' "$ERR" && ok=0 || why="exit 2 without a 'sparkops:' line" ;;
		0:truncated | 1:truncated) ok=0 ;;
		3:truncated) [ "$name" = ladder-log ] && ok=0 || why="exit 3" ;; # cut before it was read: a log with no failure in it
		*) why="exit $RC" ;;
		esac
		[ $ok = 0 ] || echo "# $name x $atk: $why ($(head -1 "$ERR"))"
		_report $ok "$name x $atk: exit $RC in $((t1 - t0))s, $(head -1 "$ERR" | cut -c1-90)"
		# a FIFO is never opened for writing here; rm the remains
		rm -rf "$p"
		[ "$suffix" = "${suffix#/}" ] || rm -rf "$(dirname "$p")"
	done
	echo "$T_N $T_FAILED" >"$TMP/count"
done
read -r T_N T_FAILED <"$TMP/count"
n_in=$(echo "$INPUTS" | wc -l)
n_at=$(echo $ATTACKS | wc -w)
echo "# input attack matrix: $n_in inputs x $n_at attacks = $T_N cases run"
[ "$T_N" = $((n_in * n_at)) ]
_report $? "every input met every attack ($T_N cases)"
done_testing
