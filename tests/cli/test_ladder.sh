#!/bin/sh
# SPDX-License-Identifier: MIT
# sparkops ladder: the log corpus through the binary, the ladder's order, the
# per-job state file, competitors judged by their cap, and the refusal rules.
# (The real page-cache flush is tests/cli/test_ladder_flush.sh.)
. "$(dirname "$0")/lib.sh"
# these cases flush into a fixture tree of our own: the test switch (docs/RELIABILITY.md)
export SPARKOPS_TEST_PROCFS_WRITES=1
S=$SPARKOPS
LOGS=$FIX/oomlogs
export XDG_STATE_HOME="$TMP/state"
unset SPARKOPS_RUN_DIR # the XDG/HOME state folder itself is tested here (in $TMP: still sealed)
IDLE=$(sysroot gb10-idle)
L="$S ladder $IDLE"

# --- usage ----------------------------------------------------------------------
run $S ladder --help
expect_rc 0 "ladder --help"
expect_out -- '--apply 1' "help lists --apply"
run $L --tried 5
expect_rc 2 "--tried 5 is not a rung"
expect_err "--tried: '5' is not a rung" "bad --tried is explained"
run $L --apply 0
expect_rc 2 "--apply 0 is not a rung"
run $L --job ../etc
expect_rc 2 "a job name with a path is refused"
run $L --force
expect_rc 2 "--force without --apply 1"
run $L extra
expect_rc 2 "a stray argument"
run $L --tryed 2
expect_rc 2 "a typo in an option"
expect_err "^sparkops: unknown option '--tryed'$" "the typo is named"
[ "$(grep -c . "$ERR")" = 2 ]
_report $? "one error line and one hint"
run $L -x
expect_err "^sparkops: unknown option '-x'$" "an unknown short option is named"
run $L --json=yes
expect_rc 2 "a value for a flag that takes none"
expect_err "^sparkops: option '--json' takes no value$" "said as such, not as an unknown '-j'"
run $L --log
expect_rc 2 "--log without its value"
expect_err "^sparkops: option '--log' needs a value$" "the option missing its value is named"
run $L --log "$TMP/nope.log"
expect_rc 2 "a missing log"
expect_err "'$TMP/nope.log': No such file or directory" "the missing log is named"
run $L --log "$TMP"
expect_rc 2 "a directory is not a log"

# --- the corpus, through the binary -----------------------------------------------
grep -v '^#' "$LOGS/EXPECTED" | while read -r file kind phase rest; do
	echo "$file $kind $phase"
done >"$TMP/expected"
while read -r file kind phase; do
	run $L --log "$LOGS/$file" --json --job "corpus-$file"
	expect_jq ".failure == \"$kind\" and .phase == \"$phase\"" "$file: $kind, $phase"
	# a log with no memory failure offers no rung and exits 3 (not a memory failure)
	if [ "$kind" = unknown ]; then
		expect_rc 3 "$file: not a memory failure"
		expect_jq '.next_rung == null and .not_memory_failure and .skipped == []' "$file: no rung offered"
		continue
	fi
	expect_rc 0 "$file: advice given"
	# rung 1 unless it does not apply (vLLM's KV cache: a flush does not enlarge
	# it; a 72B model in bf16 is more than the pool, so no server knob helps it
	# either; Ollama asking for 338.1 GiB is more than a flush leaves)
	if [ "$file" = vllm_v1_kv_negative.log ]; then
		expect_jq '.next_rung == 3 and [.skipped[].rung] == [1, 2]' \
			"$file: rungs 1 and 2 skipped: the planner puts the 72B model above the pool"
	elif [ "$file" = ollama_request_too_large.log ]; then
		expect_jq '.next_rung == 2 and [.skipped[].rung] == [1] and (.skipped[0].reason | test("asked for 338.1 GiB"))' \
			"$file: rung 1 skipped: a flush leaves less than the model asks for"
	elif [ "$kind" = vllm_kv_cache ]; then
		expect_jq '.next_rung == 2 and .rungs_tried == [] and [.skipped[].rung] == [1]' \
			"$file: a fresh job starts at rung 2, rung 1 skipped with its reason"
	else
		expect_jq '.next_rung == 1 and .rungs_tried == []' "$file: a fresh job starts at rung 1"
	fi
	expect_jq '(.change | test("batch") | not) and (.advice | test("batch_size") | not)' "$file: batch size is never rung 1"
done <"$TMP/expected"
n=$(wc -l <"$TMP/expected")
[ "$n" -ge 15 ]
_report $? "the corpus holds at least 15 logs ($n)"

run $L --log "$LOGS/vllm_startup.log" --json --job v
expect_jq '.figures.free_bytes == 2974264852 and .figures.total_capacity_bytes == 128526896333 and .figures.tried_to_allocate_bytes == 115674206700' "vLLM figures: free, total, desired"
run $L --log "$LOGS/torch_step_trainer.log" --json --job t
expect_jq '.figures.reserved_unallocated_bytes == 8912057139 and .evidence.line == 31' "torch figures and the evidence line"
expect_jq '.log.batch_per_device == 8 and .log.grad_accum == 4' "the Trainer's batch and accumulation"
run $L --log "$LOGS/kernel_oom_step.log" --json --job k
expect_jq '.figures.tried_to_allocate_bytes == null' "figures not named are null, not 0"
run $L --log "$LOGS/kernel_oom_step.log"
expect_rc 0 "human output"
expect_out '^  failure +kernel_oom_kill' "human: the failure"
expect_out '^  phase +step' "human: the phase"
expect_out 'next: rung 1, flush the page cache' "human: the next rung"

# stdin, a multi-MB line and binary junk generated here
cat "$LOGS/bnb_qlora_load.log" | $S ladder $IDLE --log - --json --job stdin >"$OUT" 2>"$ERR"
RC=$?
expect_jq '.failure == "bitsandbytes_oom" and .phase == "load"' "--log - reads stdin"
{ head -c 6000000 /dev/zero | tr '\0' '#'; printf '\n'; cat "$LOGS/torch_old_format.log"; } >"$TMP/long.log"
run $L --log "$TMP/long.log" --json --job long
expect_jq '.failure == "torch_cuda_oom" and .log.long_lines == 1 and .log.bytes > 6000000' "a 6 MB line is read past, bounded"
head -c 2000000 /dev/urandom >"$TMP/junk.bin"
run $L --log "$TMP/junk.bin" --json --job junk
expect_rc 3 "binary junk: no crash, and not a memory failure"
expect_jq '.failure == "unknown" and .phase == "unknown"' "binary junk answers unknown"

# --- the ladder's order and the state file -------------------------------------------
J="$L --job order --json"
run $J
expect_jq '.next_rung == 1' "rung 1 first"
run $J --tried 1
expect_jq '.next_rung == 2 and .rungs_tried == [1]' "then rung 2"
run $J --tried 3
expect_jq '.next_rung == 2 and .rungs_tried == [1,3]' "a later rung tried does not skip rung 2"
run $J --tried 2
expect_jq '.next_rung == 4' "then rung 4"
run $J --tried 4
expect_rc 1 "every rung tried"
expect_jq '.next_rung == null and .rungs_tried == [1,2,3,4]' "no next rung"
SF="$XDG_STATE_HOME/sparkops/ladder-order.state"
[ "$(stat -c %a "$SF")" = 600 ] && [ "$(stat -c %a "$XDG_STATE_HOME/sparkops")" = 700 ]
_report $? "state file mode 0600 in a 0700 folder"
# a second link keeps the old inode alive (its number cannot be reused) and
# shows the old file was never rewritten in place
ino1=$(stat -c %i "$SF")
ln "$SF" "$TMP/old-state"
cp "$SF" "$TMP/old-copy"
run $J --reset
expect_jq '.next_rung == 1 and .rungs_tried == []' "--reset forgets"
ino2=$(stat -c %i "$SF")
# (sp_write_atomic's temp files are NAME.tmp.PID; a job name may hold "tmp")
[ "$ino1" != "$ino2" ] && cmp -s "$TMP/old-state" "$TMP/old-copy" && [ -z "$(ls "$XDG_STATE_HOME/sparkops" | grep '\.tmp\.[0-9]*$')" ]
_report $? "state written atomically (a new file renamed into place, the old one untouched, no temp left)"
rm -f "$TMP/old-state" "$TMP/old-copy"
grep -q '^tried none$' "$SF"
_report $? "the state file is readable text"
run $L --job other --json
expect_jq '.next_rung == 1' "per job: another job has its own ladder"
run $L --job order --json --tried 1
run $L --job other --json
expect_jq '.rungs_tried == []' "per job: marking one job leaves the other alone"

# the default job comes from the log's path
cp "$LOGS/sigkill_load.log" "$TMP/a.log"
mkdir -p "$TMP/b" && cp "$LOGS/sigkill_load.log" "$TMP/b/a.log"
run $L --log "$TMP/a.log" --json --tried 1
run $L --log "$TMP/b/a.log" --json
expect_jq '.next_rung == 1 and (.job | endswith("_b_a.log"))' "default job from the log path"
run $L --log "$TMP/a.log" --json
expect_jq '.next_rung == 2' "the same log path is the same job"
(cd "$TMP/b" && $L --json >"$OUT" 2>"$ERR")
expect_jq '.job | endswith("_b")' "without a log, the job comes from the working directory"

# the same failure again asks for the same rung; a new failure counts the proposal as tried
run $L --job again --log "$LOGS/torch_step_trainer.log" --json
expect_jq '.next_rung == 1' "first failure: rung 1"
run $L --job again --log "$LOGS/torch_step_trainer.log" --json
expect_jq '.next_rung == 1 and .counted_tried == null' "the same log again: the same rung"
run $L --job again --log "$LOGS/torchrun_ranks_ansi.log" --json
expect_jq '.next_rung == 2 and .counted_tried == 1' "a new failed log after rung 1: rung 1 counted tried"

# corrupt state: a clear warning, start over, never a crash
printf 'version 1\njob order\ntried 9\n' >"$SF"
run $J
expect_rc 0 "corrupt state: still advice"
expect_err "not a ladder state file \(corrupt\?\): starting this job's ladder over" "corrupt state: a clear warning"
expect_jq '.next_rung == 1' "corrupt state: start over"
head -c 3000 /dev/urandom >"$SF"
run $J
expect_rc 0 "binary state file: no crash"
expect_jq '.rungs_tried == []' "binary state file: start over"
head -c 9000 /dev/zero | tr '\0' 'x' >"$SF"
run $J
expect_err "corrupt" "an oversized state file is corrupt"
run env -u XDG_STATE_HOME HOME="$TMP/home" $L --job h --json --tried 1
[ -f "$TMP/home/.local/state/sparkops/ladder-h.state" ]
_report $? "without XDG_STATE_HOME: ~/.local/state/sparkops"
run env XDG_STATE_HOME=relative HOME="$TMP/home" $L --job h --json
expect_jq '.rungs_tried == [1]' "a relative XDG_STATE_HOME is ignored (the spec says absolute)"
run env -u XDG_STATE_HOME -u HOME $L --job h --json
expect_rc 0 "no HOME at all: still advice"
expect_err "not remembered" "no HOME: says the rungs are not remembered"

# --- rung 2 and on: the exact change ------------------------------------------------------
run $L --job s2 --tried 1 --log "$LOGS/torch_step_trainer.log" --json
expect_jq '.change | test("max_seq_length.*per_device_train_batch_size 8 -> 4, gradient_accumulation_steps 4 -> 8")' "step OOM: sequence first, then batch 8->4 with accumulation 4->8"
run $L --job l2 --tried 1 --log "$LOGS/torch_load_shards.log" --json
expect_jq '(.change | test("load-time peak")) and (.change | test("per_device|max_seq_length") | not)' "load OOM: the load-time peak, never the batch"
expect_jq '(.next_rung_title | test("load-time peak")) and (.advice | test("per_device|max_seq_length|micro-batch") | not)' "load OOM: rung 2's title and advice say load peak, not batch"
run $L --job b3 --tried 1 --tried 2 --log "$LOGS/bnb_qlora_step.log" --json
expect_jq '.next_rung == 3 and (.change | test("not proof the model does not fit"))' "QLoRA OOM at rung 3: bf16 LoRA, not proof it does not fit"
run $L --job v2 --tried 1 --log "$LOGS/vllm_startup.log" --json
expect_jq '.change | test("--max-model-len")' "vLLM at rung 2: shorter max-model-len first"

# --- competitors, judged by their cap --------------------------------------------------------
run $S ladder $(sysroot gb10-loaded) --job c --json --tried 1
expect_jq '[.concurrent[] | select(.name=="vllm")][0] | .suspect == false and .cap_fraction == 0.5' "vLLM capped at 0.5: judged fine"
expect_jq '[.concurrent[] | select(.name=="ollama")][0].suspect == true' "Ollama holding 9 GiB: a suspect"
expect_jq '.advice | startswith("before changing the job:")' "competitors come before rung 2"
cp -r "$FIX/gb10-idle" "$TMP/uncapped"
mkdir -p "$TMP/uncapped/proc/2222"
printf 'python3\n' >"$TMP/uncapped/proc/2222/comm"
printf 'python3\0-m\0vllm.entrypoints.openai.api_server\0--model\0Qwen/Qwen2.5-7B-Instruct\0' >"$TMP/uncapped/proc/2222/cmdline"
printf '3000000 900000 1000 10 0 800000 0\n' >"$TMP/uncapped/proc/2222/statm"
run $S ladder --procfs "$TMP/uncapped/proc" --sysfs "$TMP/uncapped/sys" --job u --json --tried 1
expect_jq '[.concurrent[] | select(.pid==2222)][0] | .suspect == true and .cap_default == true' "an uncapped vLLM is the first suspect"
expect_jq '.next_rung == 2 and (.before_next_rung | test("vllm"))' "named before any change to the job"
mkdir -p "$TMP/uncapped/proc/2223"
printf 'python3\n' >"$TMP/uncapped/proc/2223/comm"
printf 'python3\0/opt/train\377.py\0' >"$TMP/uncapped/proc/2223/cmdline"
printf '3000000 2900000 1000 10 0 800000 0\n' >"$TMP/uncapped/proc/2223/statm"
run $S ladder --procfs "$TMP/uncapped/proc" --sysfs "$TMP/uncapped/sys" --job u3 --json
expect_jq '[.concurrent[] | select(.pid==2223)][0] | .suspect == true and .name == "train?.py" and (.action | test("train[?][.]py"))' "odd bytes in a process name do not break the JSON"
run $S ladder --procfs "$TMP/uncapped/proc" --sysfs "$TMP/uncapped/sys" --job u2 --json
expect_jq '.next_rung == 1 and (.advice | startswith("rung 1"))' "rung 1 (no change to the job) still comes first"

# --- cgroup OOM counters ---------------------------------------------------------------------
run $S ladder $(sysroot container-v2) --job cg --json
expect_jq '.failure == "kernel_oom_kill" and .live.cgroup_oom_kill == 2 and (.evidence.text | test("oom_kill 2"))' "no log: the cgroup's oom_kill count is the evidence"
run $S ladder $(sysroot container-v2) --job cg2 --json --log "$LOGS/sigkill_load.log"
expect_jq '.failure == "kernel_oom_kill" and .phase == "load"' "a SIGKILL end plus a cgroup OOM kill is an OOM kill"
run $S ladder $(sysroot container-v1) --job cg3 --json
expect_jq '.live.cgroup_oom_kill == 1 and .live.cgroup_failcnt == 57' "cgroup v1 counters"

# --- --apply: the refusal rules (no flush happens in any of these) ------------------------------
run $L --job ap --apply 2
expect_rc 2 "--apply 2: rungs 2-4 change the job"
expect_err "rungs 2-4 change the job" "--apply 2 explains"
expect_out '^change: ' "--apply 2 prints the change instead"
run $L --job ap --apply 3 --json --log "$LOGS/bnb_qlora_step.log"
expect_rc 2 "--apply 3 --json"
expect_jq '.applied == false and .rung == 3 and (.change | test("not proof"))' "--apply 3 --json: the change as JSON"
run $L --job ap --json
expect_jq '.rungs_tried == []' "--apply 2 marks nothing"

# --- --apply 1 against a fixture tree: watched jobs, --force, non-root ---------------------------
cp -r "$FIX/gb10-idle" "$TMP/w"
mkdir -p "$TMP/w/proc/sys/vm" "$TMP/w/proc/999" "$TMP/w/proc/998"
: >"$TMP/w/proc/sys/vm/drop_caches"
chmod 644 "$TMP/w/proc/sys/vm/drop_caches"
printf 'sparkops\n' >"$TMP/w/proc/998/comm"
printf 'sparkops\0ladder\0--log\0x.log\0' >"$TMP/w/proc/998/cmdline"
W="$S ladder --procfs $TMP/w/proc --sysfs $TMP/w/sys --job w"
if [ "$(id -u)" = 0 ]; then
	run $W --apply 1 --json
	expect_rc 0 "--apply 1 with no watched job (fixture root)"
	[ "$(cat "$TMP/w/proc/sys/vm/drop_caches")" = 3 ]
	_report $? "--apply 1 writes 3 to <procfs>/sys/vm/drop_caches"
	expect_jq '.freed_bytes == 0 and .rungs_tried == [1] and .next_rung == 2' "--apply 1 reports freed_bytes and marks rung 1 tried"
	: >"$TMP/w/proc/sys/vm/drop_caches"
	printf 'sparkops\n' >"$TMP/w/proc/999/comm"
	printf 'sparkops\0--sysfs\0/s\0run\0--interval\0five\0--\0python3\0train.py\0' >"$TMP/w/proc/999/cmdline"
	run $W --apply 1 --json --reset
	expect_rc 1 "--apply 1 refuses while 'sparkops run' watches a job"
	expect_err "not flushing: 'sparkops run/watch' is watching a job \(pid 999\)" "the refusal names the watcher"
	[ ! -s "$TMP/w/proc/sys/vm/drop_caches" ]
	_report $? "refused: nothing written"
	[ "$(wc -l <"$ERR")" = 1 ]
	_report $? "refused: one line"
	printf 'sparkops\0--procfs=/p\0watch\0--pid\0pid4242\0' >"$TMP/w/proc/999/cmdline"
	run $W --apply 1 --json
	expect_rc 1 "--apply 1 refuses while 'sparkops watch' watches a job"
	run $W --apply 1 --json --force
	expect_rc 0 "--force flushes anyway"
	[ "$(cat "$TMP/w/proc/sys/vm/drop_caches")" = 3 ]
	_report $? "--force: 3 written"
	rm "$TMP/w/proc/sys/vm/drop_caches"
	run $W --apply 1 --force
	expect_rc 1 "no drop_caches: the flush fails"
	expect_err "drop_caches': No such file or directory: nothing flushed" "the failed flush is explained"
else
	echo "# skip: --apply 1 fixture cases need root (running as uid $(id -u))"
fi
# as a non-root user: exit 4, one line, nothing touched
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	printf '' >"$TMP/w/proc/sys/vm/drop_caches"
	chmod 666 "$TMP/w/proc/sys/vm/drop_caches"
	run setpriv --reuid=65534 --regid=65534 --clear-groups $W --apply 1 --json
	expect_rc 4 "--apply 1 as non-root: exit 4"
	expect_err "needs root" "non-root: says root is needed"
	[ "$(wc -l <"$ERR")" = 1 ] && [ ! -s "$OUT" ] && [ ! -s "$TMP/w/proc/sys/vm/drop_caches" ]
	_report $? "non-root: one line, no output, nothing written (even where the file is writable)"
fi
done_testing
