#!/bin/sh
# SPDX-License-Identifier: MIT
# sparkops ladder --log on a large training log (tqdm noise, Trainer dicts, one
# 20 MB line, an OOM traceback at the end): time against `grep -c` over the
# same file (a floor for "read it once"), as a ratio, and the peak RSS (the
# classifier must not grow with the log).
BUILD=${1:-build}
S="$BUILD/sparkops"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
LOG="$T/big.log"
python3 - "$LOG" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("Loading checkpoint shards: 100%|##########| 4/4 [00:10<00:00,  2.50s/it]\n")
    f.write("x" * 20_000_000 + "\n")
    bar = "".join(f" {i//100:2d}%|#####     | {i}/10000 [01:00<05:00, 3.00s/it]\r" for i in range(10000))
    for rep in range(60):
        f.write(bar)
        f.write("{'loss': 1.2345, 'grad_norm': 0.5, 'learning_rate': 2e-05, 'epoch': 0.%02d}\n" % rep)
    f.write(open("tests/fixtures/oomlogs/torch_step_trainer.log").read())
PY
bytes=$(stat -c %s "$LOG")
now() { date +%s.%N; }
best() { # best of 3 wall times of "$@"
	b=""
	for i in 1 2 3; do
		t0=$(now); "$@" >/dev/null 2>&1; t1=$(now)
		b=$(echo "$t0 $t1 $b" | awk '{ d = $2 - $1; if ($3 == "" || d < $3) print d; else print $3 }')
	done
	echo "$b"
}
cat "$LOG" >/dev/null
tl=$(best env XDG_STATE_HOME="$T/st" "$S" ladder --log "$LOG" --json --job bench)
tg=$(best grep -c 'CUDA out of memory' "$LOG")
echo "log: $((bytes / 1048576)) MiB"
echo "ladder --log: ${tl}s   grep -c: ${tg}s   ratio ladder/grep: $(echo "$tl $tg" | awk '{ printf "%.1f", $1 / $2 }')"
if [ -x /usr/bin/time ]; then
	rss=$( { /usr/bin/time -f %M env XDG_STATE_HOME="$T/st" "$S" ladder --log "$LOG" --json --job bench >/dev/null; } 2>&1 | tail -1)
	rss0=$( { /usr/bin/time -f %M env XDG_STATE_HOME="$T/st" "$S" ladder --json --job bench0 >/dev/null; } 2>&1 | tail -1)
	echo "peak RSS: ${rss} KiB with the log, ${rss0} KiB without (the log adds $((rss - rss0)) KiB)"
fi
env XDG_STATE_HOME="$T/st" "$S" ladder --log "$LOG" --json --job bench | grep -q '"failure": "torch_cuda_oom"'
