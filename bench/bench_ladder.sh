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

# A plain 30 MB training log (the common case, no giant line): tqdm redraws,
# the Trainer's dicts, INFO and warning lines, the OOM at the end. CPU time
# (user + system, best of 5) against grep -c over the same file.
LOG2="$T/train30.log"
python3 - "$LOG2" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    n = 0
    step = 0
    while n < 30_000_000:
        step += 1
        chunk = []
        for k in range(20):
            chunk.append(" %2d%%|####      | %d/60000 [%02d:%02d<10:00:00,  1.%02ds/it]\r" % (step * 100 // 60000, step, step // 60 % 60, step % 60, k))
        chunk.append("{'loss': %.4f, 'grad_norm': %.4f, 'learning_rate': %.3e, 'epoch': %.2f}\n" % (2.0 / (1 + step / 500), 0.5 + (step % 7) / 10, 2e-5 * (1 - step / 60000), step / 6000))
        if step % 10 == 0:
            chunk.append("[INFO|trainer.py:%d] 2026-11-30 10:%02d:%02d,123 >> Saving model checkpoint to ./out/checkpoint-%d\n" % (3000 + step % 900, step // 60 % 60, step % 60, step))
            chunk.append("/usr/lib/python3/dist-packages/torch/utils/checkpoint.py:91: UserWarning: None of the inputs have requires_grad=True. Gradients will be None\n")
            chunk.append("wandb: WARNING Step %d: logging a value of type float for train/loss\n" % step)
        s = "".join(chunk)
        f.write(s)
        n += len(s)
    f.write(open("tests/fixtures/oomlogs/torch_step_trainer.log").read())
PY
# perf's task-clock when it works here (ms resolution), else time(1)'s 10 ms ticks
PERF=$(command -v perf 2>/dev/null)
[ -n "$PERF" ] && ! "$PERF" stat -e task-clock true >/dev/null 2>&1 && PERF=""
cpu() { # best of 5 CPU seconds (user + system) of "$@"
	b=""
	for i in 1 2 3 4 5; do
		if [ -n "$PERF" ]; then
			"$PERF" stat -x, -e task-clock -o "$T/cpu" "$@" >/dev/null 2>&1
			c=$(awk -F, '/task-clock/ { printf "%.4f", $1 / 1000 }' "$T/cpu")
		else
			/usr/bin/time -o "$T/cpu" -f '%U %S' "$@" >/dev/null 2>&1
			c=$(awk '{ print $1 + $2 }' "$T/cpu")
		fi
		b=$(echo "$c $b" | awk '{ if ($2 == "" || $1 < $2) print $1; else print $2 }')
	done
	echo "$b"
}
if [ -x /usr/bin/time ]; then
	cat "$LOG2" >/dev/null
	cl=$(cpu env XDG_STATE_HOME="$T/st" "$S" ladder --log "$LOG2" --json --job bench2)
	cg=$(cpu grep -c 'CUDA out of memory' "$LOG2")
	echo "plain training log: $(($(stat -c %s "$LOG2") / 1048576)) MiB   ladder --log: ${cl}s CPU   grep -c: ${cg}s CPU   ratio: $(echo "$cl $cg" | awk '{ if ($2 > 0) printf "%.1f", $1 / $2; else print "n/a (grep under the timer'"'"'s 10 ms)" }')"
	env XDG_STATE_HOME="$T/st" "$S" ladder --log "$LOG2" --json --job bench2 | grep -q '"failure": "torch_cuda_oom"'
fi
