#!/bin/sh
# SPDX-License-Identifier: MIT
# run's live status with a real tqdm progress bar on the same terminal, in
# tmux: the bar's line is always open, so the status goes to the terminal's
# title (OSC 2) and never into the bar's line; a job that ends its lines
# still gets the line itself. Debian's python3-tqdm, /usr/bin/python3.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
PY=/usr/bin/python3
if [ -n "$SPARKOPS_UNDER_QEMU" ]; then
	skip_case "status with a tqdm bar" "'run' starts threads (qemu-user)"
	done_testing
	exit $?
fi
if ! command -v tmux >/dev/null 2>&1 || ! $PY -c 'import tqdm' 2>/dev/null; then
	skip_case "status with a tqdm bar" "needs tmux and python3-tqdm (apt-get install tmux python3-tqdm)"
	done_testing
	exit $?
fi
SOCK="$TMP/tmux.sock"
tm() { tmux -S "$SOCK" -f /dev/null "$@"; }
trap 'tm kill-server 2>/dev/null; rm -rf "$TMP"' EXIT
cat >"$TMP/job.py" <<'PYEOF'
import time
from tqdm import tqdm
for _ in tqdm(range(60), mininterval=0.05):
    time.sleep(0.1)
PYEOF
cat >"$TMP/go.sh" <<SHEOF
#!/bin/sh
env SPARKOPS_NVML_LIB=/nonexistent NO_COLOR=1 $S run --interval 0.3 --log $TMP/run.csv -- $PY $TMP/job.py
echo "rc=\$?" >$TMP/rc
sleep 30
SHEOF
chmod +x "$TMP/go.sh"
tm new-session -d -x 120 -y 30 "$TMP/go.sh"
titles=0
bars=0
glued=0
i=0
while [ $i -lt 40 ] && [ ! -f "$TMP/rc" ]; do
	sleep 0.15
	t=$(tm display-message -p '#{pane_title}' 2>/dev/null)
	case $t in "sparkops "*"| no throughput yet"* | "sparkops "*"it/s"*) titles=$((titles + 1)) ;; esac
	tm capture-pane -p >"$TMP/pane" 2>/dev/null
	grep -q '[0-9]*%|' "$TMP/pane" && bars=$((bars + 1))
	grep -q 'it/s.*sparkops [0-9]\|sparkops [0-9]*m[0-9]*s |.*%|' "$TMP/pane" && glued=$((glued + 1))
	i=$((i + 1))
done
[ "$titles" -ge 5 ]
_report $? "the status shows (as the terminal's title) while the tqdm bar runs: $titles of $i snapshots"
[ "$bars" -ge 5 ]
_report $? "the tqdm bar itself keeps redrawing on the terminal ($bars of $i snapshots)"
[ "$glued" -eq 0 ]
_report $? "the status never lands inside the bar's line ($glued snapshots)"
i=0
while [ $i -lt 100 ] && [ ! -f "$TMP/rc" ]; do sleep 0.1; i=$((i + 1)); done
grep -q 'rc=0' "$TMP/rc" 2>/dev/null
_report $? "the job ends with its own exit status"
grep -q '100%|' "$TMP/pane" || tm capture-pane -p | grep -q '100%|'
_report $? "the bar reached 100% on the terminal"
done_testing
