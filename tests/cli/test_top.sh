#!/bin/sh
# SPDX-License-Identifier: MIT
# sparkops top, end to end in tmux on the GB10 fixtures with the fake NVML:
# the pool figures status --json gives, the lit reasons, a sparkline that
# moves, each sort, a resize and back, q / SIGTERM / SIGSEGV with the
# terminal restored, a hung driver, a running job, the flush prompt.
. "$(dirname "$0")/lib.sh"
# these cases flush into a fixture tree of our own: the test switch (docs/RELIABILITY.md)
export SPARKOPS_TEST_PROCFS_WRITES=1
S=$SPARKOPS
PC=$BUILD_DIR/progress_child
SC="$(cd "$(dirname "$0")/../fake-nvml/scenarios" && pwd)"
LOADED="--procfs $FIX/gb10-loaded/proc --sysfs $FIX/gb10-loaded/sys"
cd "$TMP" || exit 2

run $S top --help
expect_rc 0 "top --help"
expect_out -- '--interval DURATION' "top --help lists --interval"
run $S top extra
expect_rc 2 "top takes no operand"
run $S top --interval 0
expect_rc 2 "--interval 0 is refused"
run $S top </dev/null
expect_rc 2 "stdout not a terminal"
expect_err "needs a terminal" "says a terminal is needed"
expect_err "sparkops status.*sparkops watch" "points to status and watch"

if ! command -v tmux >/dev/null 2>&1; then
	echo "# skipped the tmux cases: tmux is not installed (apt-get install tmux)"
	done_testing
	exit $?
fi

SOCK="$TMP/tmux.sock"
tm() { tmux -S "$SOCK" -f /dev/null "$@"; }
trap 'tm kill-server 2>/dev/null; rm -rf "$TMP"' EXIT

# a time scenario: GB10 under load, the temperature climbing, power flat
cat >"$TMP/climb.scn" <<'EOF'
count - 1
name 0 NVIDIA GB10
temp 0 @0-8 55..95
power 0 98000
power_limit 0 NOT_SUPPORTED
mem_total 0 NOT_SUPPORTED
sm_clock 0 2405
sm_clock_max 0 3003
util_gpu 0 97
reasons 0 0x24
viol_power 0 3720000000000
viol_thermal 0 725000000000
EOF

# the pane: top, then its exit code and whether the terminal came back
cat >"$TMP/pane.sh" <<'EOF'
#!/bin/sh
before=$(stty -g)
echo $$ >"$PANE_PID_FILE"
"$@"
rc=$?
if [ "$(stty -g)" = "$before" ]; then echo "rc=$rc restored"; else echo "rc=$rc NOT-restored"; fi
sleep 600
EOF
chmod +x "$TMP/pane.sh"

# start NAME ENV... -- ARGS... : a 100x30 session running top
start() {
	name=$1
	shift
	envs=""
	while [ "$1" != "--" ]; do envs="$envs $1"; shift; done
	shift
	tm new-session -d -s "$name" -x 100 -y 30 \
		"env -u NO_COLOR LANG=C.UTF-8 TERM=screen-256color PANE_PID_FILE=$TMP/$name.pid XDG_RUNTIME_DIR=$TMP/rt SPARKOPS_RUN_DIR=$SPARKOPS_RUN_DIR \
SPARKOPS_NVML_LIB=$FAKE_NVML $envs $TMP/pane.sh $S top $*"
}
cap() { tm capture-pane -p -t "$1" >"$OUT"; }
# wait_for NAME PATTERN : up to 30 s for the screen to show it (a bound,
# not a wait: the ASan build on a loaded machine took over 10 s for a job row)
wait_for() {
	i=0
	while [ $i -lt 300 ]; do
		cap "$1"
		grep -Eq -- "$2" "$OUT" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
top_pid() { pgrep -P "$(cat "$TMP/$1.pid")" | head -1; }
pids() { awk '/PID KIND/ {on = 1; next} on && $1 ~ /^[0-9]+$/ {printf "%s ", $1}' "$OUT"; }
mkdir -p "$TMP/rt"

# ---- the GB10 tree, the temperature climbing --------------------------------
start a FAKE_NVML_SCENARIO=$TMP/climb.scn FAKE_NVML_PROCS=3300:8000000000 -- --interval 0.2 $LOADED
wait_for a 'PROCESSES'
_report $? "top draws the screen in tmux"
SPARKOPS_NVML_LIB=$FAKE_NVML FAKE_NVML_SCENARIO=$SC/gb10.scn $S status --json $LOADED >"$TMP/status.json" 2>/dev/null
now=$(jq -r '.budget.now_bytes / 1073741824 * 10 | round / 10' "$TMP/status.json")
aft=$(jq -r '.budget.after_flush_bytes / 1073741824 * 10 | round / 10' "$TMP/status.json")
tot=$(jq -r '.pool.total_bytes / 1073741824 * 10 | round / 10' "$TMP/status.json")
cap a
expect_out "budget now $now GiB +after flush $aft GiB" "the budget now ($now GiB) and after flush ($aft GiB) as status --json says"
expect_out "POOL .* $tot GiB" "the pool's total ($tot GiB)"
expect_out "shmem 0\.6" "shmem marked apart"
expect_out "in 2MiB\+ blocks: missing" "contiguous memory: the fixture has no buddyinfo, said as missing (never 0)"
expect_out "sw_power_cap sw_thermal_slowdown" "the lit clock-event reasons by name"
expect_out "throttled: power 1h02m thermal 12m05s" "the time throttled"
expect_out "GB10 die 85\.5 C .*PL1 139\.6/140 W .*at cap" "GB10's die temperature and PL1 against its cap"
expect_out "PSI  memory 4\.2/1\.1%" "pressure"
grep '^temp ' "$OUT" | sed 's/ *[0-9]* C$//' >"$TMP/spark1"
sleep 1.5
cap a
grep '^temp ' "$OUT" | sed 's/ *[0-9]* C$//' >"$TMP/spark2"
! cmp -s "$TMP/spark1" "$TMP/spark2" && grep -q '[▁▂▃▄▅▆▇█]' "$TMP/spark2"
_report $? "the temperature sparkline moves"
grep '^power ' "$OUT" | grep -q '▆▆▆▆▆'
_report $? "power stays flat beside it"

# each sort key
[ "$(pids)" = "3301 4000 2101 3300 " ]
_report $? "sorted by rss (got: $(pids))"
tm send-keys -t a s
wait_for a 'sort: gpu'
[ "$(pids)" = "3300 3301 4000 2101 " ]
_report $? "s: sorted by GPU memory (got: $(pids))"
tm send-keys -t a s
wait_for a 'sort: pid'
[ "$(pids)" = "2101 3300 3301 4000 " ]
_report $? "s: sorted by pid (got: $(pids))"
tm send-keys -t a s
wait_for a 'sort: kind'
[ "$(pids)" = "4000 2101 3301 3300 " ]
_report $? "s: sorted by kind (servers, then trainers) (got: $(pids))"
tm send-keys -t a s
wait_for a 'sort: container'
_report $? "s: grouped by container"
tm send-keys -t a s
wait_for a 'sort: rss'
_report $? "s: back to rss"

# pause, help
tm send-keys -t a p
wait_for a 'PAUSED'
_report $? "p pauses"
tm send-keys -t a p h
wait_for a 'cycle the process sort'
_report $? "h shows the help"
tm send-keys -t a x
wait_for a 'PROCESSES'
_report $? "any key closes the help"

# a resize to 60x20 and back
tm resize-window -t a -x 60 -y 20
wait_for a 'budget now'
LC_ALL=C.UTF-8 sed 's/[^ -~]/x/g' "$OUT" | awk 'length($0) > 60 {bad = 1} END {exit bad}' && [ "$(wc -l <"$OUT")" -le 20 ] && grep -q 'PROCESSES' "$OUT"
_report $? "redrawn at 60x20 (pool, budget, processes; nothing past the edge)"
tm resize-window -t a -x 100 -y 30
wait_for a 'unified memory pool'
grep -q 'PID KIND' "$OUT"
_report $? "and back at 100x30"

# colour by default, none with NO_COLOR
tm capture-pane -e -p -t a | grep -q "$(printf '\033')\[[0-9;]*3[1-6]m"
_report $? "colour on a colour terminal"

tm send-keys -t a q
wait_for a '^rc='
expect_out '^rc=0 restored' "q exits 0 with the terminal restored"

# ---- flags: --ascii, --no-color -----------------------------------------------
start b FAKE_NVML_SCENARIO=$SC/gb10.scn -- --ascii --no-color --interval 0.2 $LOADED
wait_for b 'PROCESSES'
! LC_ALL=C grep -q "$(printf '[\200-\377]')" "$OUT" && grep -q '^POOL \[#' "$OUT"
_report $? "--ascii: plain ASCII bars and sparklines"
! tm capture-pane -e -p -t b | grep -q "$(printf '\033')\[[0-9;]*3[1-6]m"
_report $? "--no-color: no colour"
tm send-keys -t b q
wait_for b '^rc='

# ---- SIGTERM and a crash restore the terminal ----------------------------------
start c FAKE_NVML_SCENARIO=$SC/gb10.scn -- $LOADED
wait_for c 'PROCESSES'
kill -TERM "$(top_pid c)"
wait_for c '^rc='
expect_out '^rc=143 restored' "SIGTERM: the terminal restored, killed by the signal"
start d FAKE_NVML_SCENARIO=$SC/gb10.scn -- $LOADED
wait_for d 'PROCESSES'
kill -SEGV "$(top_pid d)"
wait_for d '^rc='
expect_out '^rc=139 restored' "SIGSEGV: endwin, then the signal again"

# ---- a hung driver: the GPU pane stale, the rest updating -----------------------
start e FAKE_NVML_SCENARIO=$SC/hang.scn -- --interval 0.2 $LOADED
wait_for e 'STALE'
_report $? "a hung NVML call turns the GPU pane STALE"
n1=$(sed -n 's/.* #\([0-9]*\).*/\1/p' "$OUT" | head -1)
sleep 1
cap e
n2=$(sed -n 's/.* #\([0-9]*\).*/\1/p' "$OUT" | head -1)
[ -n "$n1" ] && [ -n "$n2" ] && [ "$n2" -ge $((n1 + 3)) ] && grep -q "budget now $now GiB" "$OUT" && grep -q 'PROCESSES' "$OUT"
_report $? "the rest of the screen keeps updating (samples $n1 -> $n2)"
tm send-keys -t e q
wait_for e '^rc='
expect_out '^rc=0 restored' "q still exits 0 with the driver hung"

# ---- a running job -------------------------------------------------------------------
XDG_RUNTIME_DIR=$TMP/rt SPARKOPS_RUN_DIR=$SPARKOPS_RUN_DIR SPARKOPS_NVML_LIB=/nonexistent $S run --interval 0.2 --log job.csv -- \
	$PC tqdm 50 100 50 30 >/dev/null 2>&1 &
jpid=$!
start f FAKE_NVML_SCENARIO=$SC/gb10.scn -- --interval 0.2 $LOADED
# the command is cut to its column (a longer build path cuts more: under
# build-asan/ in a deep checkout not even "progress_ch" is left), so the
# shown text must be the start of the command line
wait_for f "JOB  run $jpid  /.* [0-9.]+ it/s"
shown=$(sed -n "s|^JOB  run $jpid  \(/[^ ]*\) .*|\1|p" "$OUT" | head -1)
case "$PC tqdm" in "$shown"*) [ ${#shown} -ge 8 ] ;; *) false ;; esac
_report $? "a running 'sparkops run' shows: its command ($shown) and throughput"
expect_out "JOB  .*guard: off" "and its guard state"
[ -f "$SPARKOPS_RUN_DIR/run/$jpid" ] && grep -q '^mode=run$' "$SPARKOPS_RUN_DIR/run/$jpid"
_report $? "the status file is named by pid, key=value"
[ "$(stat -c %a "$SPARKOPS_RUN_DIR/run/$jpid")" = 644 ] && [ "$(stat -c %a "$SPARKOPS_RUN_DIR/run")" = 700 ]
_report $? "file 0644 in a 0700 folder"
# SIGTERM: run passes the signal on to its job, and the job, started under
# & by this non-interactive shell, ignores SIGINT (the case waited 30 s for
# its own end)
kill -TERM $jpid
wait $jpid
[ ! -e "$SPARKOPS_RUN_DIR/run/$jpid" ]
_report $? "the status file is removed at exit"
wait_for f 'PROCESSES' && ! grep -q '^JOB' "$OUT"
i=0; while [ $i -lt 30 ] && grep -q '^JOB' "$OUT"; do sleep 0.1; cap f; i=$((i + 1)); done
! grep -q '^JOB' "$OUT"
_report $? "and the job leaves the screen"
tm send-keys -t f q

# ---- the flush: asks y/n, shows what it freed -----------------------------------------
cp -r "$FIX/gb10-loaded" "$TMP/tree"
chmod -R u+w "$TMP/tree"
mkdir -p "$TMP/tree/proc/sys/vm"
: >"$TMP/tree/proc/sys/vm/drop_caches"
start g FAKE_NVML_SCENARIO=$SC/gb10.scn -- --procfs $TMP/tree/proc --sysfs $TMP/tree/sys
wait_for g 'PROCESSES'
if [ "$(id -u)" = 0 ]; then
	tm send-keys -t g f
	wait_for g 'flush the page cache now .*y/n'
	_report $? "f asks y/n"
	tm send-keys -t g n
	wait_for g 'flush cancelled'
	_report $? "n cancels"
	[ ! -s "$TMP/tree/proc/sys/vm/drop_caches" ]
	_report $? "nothing written when cancelled"
	tm send-keys -t g f
	wait_for g 'y/n'
	tm send-keys -t g y
	wait_for g 'flushed: page cache 45\.0 GiB -> 45\.0 GiB'
	_report $? "y flushes and shows what it freed"
	[ "$(cat "$TMP/tree/proc/sys/vm/drop_caches")" = 3 ]
	_report $? "through the one flush function (drop_caches 3 under --procfs)"
else
	tm send-keys -t g f
	wait_for g 'needs root'
	_report $? "f without root says it needs root"
fi
tm send-keys -t g q
wait_for g '^rc='
done_testing
