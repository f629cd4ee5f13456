#!/bin/sh
# SPDX-License-Identifier: MIT
# sparkops run --ladder: a job that ends in an OOM the ladder classifies is
# run again down rungs 1 and 2; anything else is not retried. The job is
# tests/helpers/ladder_child.sh (a PyTorch CUDA OOM until its
# --max_seq_length is small enough). Everything reads a fixture tree; rung 1's
# flush, as root, writes the fixture's own drop_caches, never the machine's.
. "$(dirname "$0")/lib.sh"
# these cases flush into a fixture tree of our own: the test switch (docs/RELIABILITY.md)
export SPARKOPS_TEST_PROCFS_WRITES=1
S=$SPARKOPS
HERE=$(cd "$(dirname "$0")/../.." && pwd)
CHILD=$HERE/tests/helpers/ladder_child.sh
export SPARKOPS_NVML_LIB=$FAKE_NVML FAKE_NVML_SCENARIO=healthy
chmod 711 "$TMP"
W=$TMP/w
mkdir "$W" && chmod 777 "$W"
cd "$W" || exit 2
# a fixture copy with a drop_caches of its own
cp -r "$FIX/gb10-idle" "$TMP/fx"
mkdir -p "$TMP/fx/proc/sys/vm"
: >"$TMP/fx/proc/sys/vm/drop_caches"
chmod -R a+rX "$TMP/fx"
chmod 666 "$TMP/fx/proc/sys/vm/drop_caches"
ROOTS="--procfs $TMP/fx/proc --sysfs $TMP/fx/sys"
RUN="$S run $ROOTS --interval 1 --quiet"
SEQ="--ladder --ladder-seq-flag --max_seq_length"
ROOT=no
[ "$(id -u)" = 0 ] && ROOT=yes
tries() { # FILE: the tries the child saw, one word per try
	awk '{ printf "%s%s", (NR > 1 ? " " : ""), $1 }' "$1"
}

# --- usage ---------------------------------------------------------------------------------------
run $S run --help
expect_out -- '--ladder-seq-flag FLAG' "run --help lists --ladder-seq-flag"
expect_out -- '--ladder-max-tries N' "run --help lists --ladder-max-tries"
run $S watch --help
expect_no_out 'ladder' "watch --help has no --ladder (it does not own the job)"
run $S watch --ladder --count 1
expect_rc 2 "watch --ladder is unknown"
run $RUN --ladder-seq-flag --max_seq_length -- true
expect_rc 2 "--ladder-seq-flag without --ladder"
expect_err 'go with --ladder' "the missing --ladder is said"
run $RUN --ladder -- true
expect_rc 2 "--ladder without a flag to halve"
expect_err 'needs --ladder-seq-flag or --ladder-batch-flag' "what --ladder needs is said"
run $RUN --ladder --ladder-seq-flag --a --ladder-accum-flag --b -- true
expect_rc 2 "--ladder-accum-flag without --ladder-batch-flag"
run $RUN --ladder --ladder-seq-flag max_seq_length -- true
expect_rc 2 "a flag without its dashes"
expect_err "'max_seq_length' is not a flag" "the bad flag is named"
run $RUN --ladder --ladder-seq-flag --x=1 -- true
expect_rc 2 "a flag with a value"
run $RUN --ladder --ladder-seq-flag --x --ladder-batch-flag --x -- true
expect_rc 2 "one flag for two rungs"
run $RUN $SEQ --ladder-max-tries 0 -- true
expect_rc 2 "--ladder-max-tries 0"
run $RUN $SEQ --ladder-max-tries 21 -- true
expect_rc 2 "--ladder-max-tries over 20"

# --- without --ladder nothing changes ------------------------------------------------------------------
rm -f trace
run env LADDER_TRACE=$W/trace $RUN --log n.csv --summary n.json -- "$CHILD" --max_seq_length 2048
expect_rc 1 "without --ladder: the OOM's exit code, once"
[ "$(tries trace)" = "seq=2048" ] && ! grep -q ',event,ladder_' n.csv && jq -e 'has("ladder_tries") | not' n.json >/dev/null
_report $? "without --ladder: one try, no ladder rows, no ladder_tries"

# --- the series: 2048 (flush as root) -> 1024 -> 512 ---------------------------------------------------
rm -f trace
run env LADDER_TRACE=$W/trace $RUN --log a.csv --summary a.json $SEQ -- "$CHILD" --max_seq_length 2048 --epochs 1
expect_rc 0 "the series ends in the try that fits"
cp "$OUT" a.out
cp "$ERR" a.err
if [ $ROOT = yes ]; then
	[ "$(tries trace)" = "seq=2048 seq=2048 seq=1024 seq=512" ]
	_report $? "root: 2048, 2048 after the flush, 1024, 512 ($(tries trace))"
	grep -qx 3 "$TMP/fx/proc/sys/vm/drop_caches"
	_report $? "root: rung 1 wrote 3 to the (fixture's) drop_caches"
	jq -e '[.ladder_tries[].rung] == [0, 1, 2, 2] and (.ladder_tries[1].change | startswith("flush"))' a.json >/dev/null
	_report $? "root: the summary's tries have rungs 0, 1, 2, 2"
	# what a flush gives back (the ladder's own figure) under 1 GiB: not worth a rerun
	cp -r "$TMP/fx" "$TMP/fxsmall"
	sed -i -e 's/^Cached:.*/Cached:           204800 kB/' -e 's/^Buffers:.*/Buffers:            1024 kB/' -e 's/^SReclaimable:.*/SReclaimable:      102400 kB/' "$TMP/fxsmall/proc/meminfo"
	: >"$TMP/fxsmall/proc/sys/vm/drop_caches"
	rm -f trace
	run env LADDER_TRACE=$W/trace $S run --procfs "$TMP/fxsmall/proc" --sysfs "$TMP/fxsmall/sys" --interval 1 --quiet \
		--log c.csv --summary c.json $SEQ -- "$CHILD" --max_seq_length 2048
	expect_rc 0 "root, little page cache: the series still ends at 512"
	[ "$(tries trace)" = "seq=2048 seq=1024 seq=512" ] && [ ! -s "$TMP/fxsmall/proc/sys/vm/drop_caches" ]
	_report $? "root, 0.2 GiB of page cache: rung 1 skipped, nothing flushed ($(tries trace))"
	expect_err 'rung 1 skipped: a flush would give back only 100.0 MiB' "why rung 1 was skipped is said (the ladder's own words)"
else
	skip_case "root: rung 1 flushes" "not root"
fi
jq -e '.ladder_tries[-1] | .exit_code == 0 and .failure == null and .argv == ["'"$CHILD"'", "--max_seq_length", "512", "--epochs", "1"] and (.command | endswith("--max_seq_length 512 --epochs 1"))' a.json >/dev/null
_report $? "the last try: exit 0, the command with 512 (argv and words)"
jq -e '[.ladder_tries[] | select(.rung == 2) | .change] == ["--max_seq_length:2048->1024", "--max_seq_length:1024->512"] and ([.ladder_tries[:-1][] | .failure] | all(. == "torch_cuda_oom")) and ([.ladder_tries[] | .seconds] | all(type == "number")) and .ladder_stop.reason == "succeeded" and .exit_code == 0' a.json >/dev/null
_report $? "the summary: each try's change, failure (torch_cuda_oom), seconds; stopped: succeeded"
n=$(jq '.ladder_tries | length' a.json)
[ "$(grep -c ',event,ladder_try,' a.csv)" = "$n" ] && [ "$(grep -c ',event,exit,' a.csv)" = "$n" ] &&
	grep -q ',event,ladder_try,try=2 rung=' a.csv && grep -q 'rung=2 change=--max_seq_length:1024->512 pid=[0-9]* cmd=.*--max_seq_length 512' a.csv
_report $? "each try is a ladder_try row (with its rung and command) and an exit row in the log"
RC=0 OUT=a.out ERR=a.err
expect_err 'ladder try 1 +rung 0' "the human summary lists the tries"
expect_err 'ladder: try 1 ran out of memory \(PyTorch' "the OOM is named"
expect_out "'loss': 1.234" "the job's output passes through"

# --- the = form, and --ladder-max-tries ------------------------------------------------------------------
rm -f trace
run env LADDER_TRACE=$W/trace LADDER_FIT_SEQ=1024 $RUN --log e.csv --summary e.json $SEQ -- "$CHILD" --max_seq_length=2048
expect_rc 0 "the '=' form: the series ends at 1024"
jq -e '.ladder_tries[-1].argv[1] == "--max_seq_length=1024"' e.json >/dev/null && [ "$(tail -1 trace)" = "seq=1024 batch=1 accum=1" ]
_report $? "the '=' form is kept: --max_seq_length=1024"
rm -f trace
run env LADDER_TRACE=$W/trace $RUN --log m.csv --summary m.json $SEQ --ladder-max-tries 2 -- "$CHILD" --max_seq_length 2048
expect_rc 1 "--ladder-max-tries 2: the last try's exit code"
[ "$(wc -l <trace)" = 2 ] && jq -e '(.ladder_tries | length) == 2 and .ladder_stop.reason == "max_tries"' m.json >/dev/null
_report $? "--ladder-max-tries 2: two tries"
expect_err 'ladder-max-tries 2 reached; the next would have been rung' "the bound is said, with the next rung"

# --- not an OOM: not retried -------------------------------------------------------------------------------
rm -f trace
run env LADDER_TRACE=$W/trace LADDER_MODE=value $RUN --log v.csv --summary v.json $SEQ -- "$CHILD" --max_seq_length 2048
expect_rc 3 "a ValueError: its exit code"
[ "$(wc -l <trace)" = 1 ] && jq -e '(.ladder_tries | length) == 1 and .ladder_tries[0].failure == "not_oom" and .ladder_stop.reason == "not_oom"' v.json >/dev/null
_report $? "a ValueError: one try"
expect_err 'not an out-of-memory failure: not retried' "why it is not retried is said"

# --- the batch rung, then the rung that needs a person ------------------------------------------------------
rm -f trace
run env LADDER_TRACE=$W/trace LADDER_FIT_SEQ=0 $RUN --log b.csv --summary b.json --ladder-max-tries 8 \
	--ladder --ladder-seq-flag --max_seq_length --ladder-batch-flag --per_device_train_batch_size \
	--ladder-accum-flag --gradient_accumulation_steps -- "$CHILD" --max_seq_length 256 --per_device_train_batch_size 4
expect_rc 1 "a job that never fits: the last try's exit code"
t=$(awk '{ print $2, $3 }' trace | uniq | tr '\n' ';')
sed 's/ batch=.*//' trace | uniq | tr '\n' ' ' >seqs
[ "$t" = "batch=4 accum=1;batch=2 accum=2;batch=1 accum=4;" ] && [ "$(cat seqs)" = "seq=256 seq=128 " ]
_report $? "256 -> 128 (the floor), then batch 4/accum 1 -> 2/2 -> 1/4 ($t)"
jq -e '.ladder_tries[-1].argv[-2:] == ["--gradient_accumulation_steps", "4"] and .ladder_stop.reason == "human" and .ladder_stop.rung == 3 and (.ladder_stop.change | test("LoRA"))' b.json >/dev/null
_report $? "the accumulation flag is added, then doubled; stopped at rung 3 with its change"
expect_err 'rung 3 needs a person: .*LoRA' "the change a person makes is printed"
expect_err 'rung 2 \(micro-batch\) done: --per_device_train_batch_size is already 1' "why the batch rung ended is said"
grep -q ',event,ladder_stop,"\{0,1\}reason=human tries=[0-9]* rung=3 change=' b.csv
_report $? "the stop is a ladder_stop row"

# --- the kernel's OOM killer (SIGKILL with the cgroup's oom_kill up) ----------------------------------------------
cp -r "$FIX/container-v2" "$TMP/cv2"
chmod -R a+rX "$TMP/cv2"
rm -f trace
run env LADDER_TRACE=$W/trace LADDER_MODE=kill LADDER_EVENTS=$TMP/cv2/sys/fs/cgroup/system.slice/train.service/memory.events \
	$S run --procfs "$TMP/cv2/proc" --sysfs "$TMP/cv2/sys" --interval 1 --quiet --log k.csv --summary k.json $SEQ -- "$CHILD" --max_seq_length 2048
expect_rc 0 "an OOM kill (no message) is retried"
jq -e '.ladder_tries[0] | .exit_code == 137 and .ended_by == "oom_kill" and .failure == "kernel_oom_kill"' k.json >/dev/null && [ "$(wc -l <trace)" -ge 2 ]
_report $? "the OOM-killed try: 137, oom_kill, kernel_oom_kill"
rm -f trace
echo "oom_kill 0" >events # not the fixture's: the counter the run reads stays
run env LADDER_TRACE=$W/trace LADDER_MODE=kill LADDER_EVENTS=$W/events $RUN --log k2.csv --summary k2.json $SEQ -- "$CHILD" --max_seq_length 2048
expect_rc 137 "a SIGKILL without an OOM kill seen: not retried"
[ "$(wc -l <trace)" = 1 ]
_report $? "a plain SIGKILL: one try"

# --- a flag the command lacks: its rung is skipped ------------------------------------------------------------
rm -f trace
run env LADDER_TRACE=$W/trace LADDER_FIT_SEQ=0 $RUN --log f.csv --summary f.json --ladder --ladder-seq-flag --max_seq_len -- "$CHILD"
expect_rc 1 "a flag not in the command: the OOM's exit code"
expect_err 'ladder: --max_seq_len is not in the command: the sequence-length rung will be skipped' "said at the start"
expect_err 'rung 2 \(sequence length\) skipped: --max_seq_len is not in the command' "said when the rung comes"
grep -q ',event,ladder_skip,rung 2 (sequence length) skipped' f.csv
_report $? "the skip is a ladder_skip row"

# --- Ctrl-C during try 2 stops the series ------------------------------------------------------------------------
# signal SIG NAME: sent to sparkops while try 2 runs. A background job of a
# non-interactive shell ignores SIGINT, so the child may outlive SIGINT and
# still fail with its OOM: no third try either way.
signal() {
	rm -f trace
	LADDER_TRACE=$W/trace LADDER_MODE=sleep $RUN --log i$1.csv --summary i$1.json $SEQ -- "$CHILD" --max_seq_length 2048 >i.out 2>i.err &
	pid=$!
	k=0
	while [ "$(cat trace 2>/dev/null | wc -l)" -lt 2 ] && [ $k -lt 100 ]; do sleep 0.1; k=$((k + 1)); done
	sleep 0.3
	kill -$1 $pid
	wait $pid
	RC=$?
	OUT=i.out ERR=i.err
	[ "$(wc -l <trace)" = 2 ] && jq -e '(.ladder_tries | length) == 2 and .ladder_stop.reason == "interrupted" and .ladder_tries[1].exit_code == '"$RC" i$1.json >/dev/null
	_report $? "SIG$1 during try 2: no third try (exit $RC)"
	expect_err 'ladder: interrupted: no further try' "SIG$1: the stop is said"
}
signal TERM
expect_rc 143 "SIGTERM during try 2: the job's 128+15"
signal INT

# --- without root: rung 1 is skipped with the reason ---------------------------------------------------------------
if [ $ROOT = yes ] && command -v setpriv >/dev/null; then
	rm -f trace
	run setpriv --reuid=65534 --regid=65534 --clear-groups env LADDER_TRACE=$W/trace $RUN --log u.csv --summary u.json $SEQ -- "$CHILD" --max_seq_length 2048
	expect_rc 0 "not root: the series still ends at 512"
	[ "$(tries trace)" = "seq=2048 seq=1024 seq=512" ]
	_report $? "not root: 2048, 1024, 512 ($(tries trace))"
	expect_err 'rung 1 skipped: not root .*without --guard-load' "not root: why rung 1 is skipped"
	rm -f trace
	mkdir -p model && echo weights >model/w.bin && chmod -R a+rwX model
	run setpriv --reuid=65534 --regid=65534 --clear-groups env LADDER_TRACE=$W/trace $RUN --log g.csv --summary g.json --guard-load $SEQ -- "$CHILD" --max_seq_length 2048 --model "$W/model"
	expect_rc 0 "not root, --guard-load, the model folder not the user's"
	[ "$(tries trace)" = "seq=2048 seq=1024 seq=512" ]
	_report $? "not root, nothing of the user's to evict: 2048, 1024, 512"
	expect_err "rung 1 skipped: not root, and none of the files the command names is the user's" "not root: nothing of the user's to evict is said"
	rm -f trace
	chown -R 65534 model
	run setpriv --reuid=65534 --regid=65534 --clear-groups env LADDER_TRACE=$W/trace $RUN --log h.csv --summary h.json --guard-load $SEQ -- "$CHILD" --max_seq_length 2048 --model "$W/model"
	expect_rc 0 "not root, --guard-load: rung 1 evicts the command's files"
	[ "$(tries trace)" = "seq=2048 seq=2048 seq=1024 seq=512" ] && jq -e '.ladder_tries[1].change == "evict:files=1"' h.json >/dev/null
	_report $? "not root, --guard-load: 2048, 2048 after evicting, 1024, 512"
	! grep -q 'could not start' "$ERR" && grep -q '"event":"start"' h.csv.receipts.jsonl
	_report $? "not root: the load guard's thread starts (a small stack under RLIMIT_MEMLOCK)"
else
	skip_case "not root: rung 1 skipped" "needs root and setpriv to become nobody"
fi
done_testing
