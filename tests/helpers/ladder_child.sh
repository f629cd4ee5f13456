#!/bin/sh
# SPDX-License-Identifier: MIT
# A training job for tests/cli/test_run_ladder.sh: it reads its
# --max_seq_length, --per_device_train_batch_size and
# --gradient_accumulation_steps (either "--flag V" or "--flag=V"), appends
# its command line to $LADDER_TRACE, and then, by $LADDER_MODE:
#   oom (default): a PyTorch CUDA OOM (traceback, exit 1) until the sequence
#       length is <= $LADDER_FIT_SEQ (default 512) and the batch is <=
#       $LADDER_FIT_BATCH (default: any); then a progress line and exit 0
#   value: a ValueError (exit 3), not an OOM
#   sleep: as oom, after sleeping 2 s on the second try (the Ctrl-C case)
#   kill: on the first try, the kernel's OOM killer as a fixture sees it: one
#       more oom_kill in $LADDER_EVENTS (a fixture's memory.events), then
#       SIGKILL, nothing printed; then a progress line and exit 0
seq=2048 batch=1 accum=1
while [ $# -gt 0 ]; do
	case $1 in
	--max_seq_length) seq=$2; shift ;;
	--max_seq_length=*) seq=${1#*=} ;;
	--per_device_train_batch_size) batch=$2; shift ;;
	--per_device_train_batch_size=*) batch=${1#*=} ;;
	--gradient_accumulation_steps) accum=$2; shift ;;
	--gradient_accumulation_steps=*) accum=${1#*=} ;;
	esac
	shift
done
echo "seq=$seq batch=$batch accum=$accum" >>"${LADDER_TRACE:-/dev/null}"
tries=$(wc -l <"${LADDER_TRACE:-/dev/null}" 2>/dev/null || echo 0)
echo "***** Running training *****"
echo "  Instantaneous batch size per device = $batch"
echo "  Gradient Accumulation steps = $accum"
case ${LADDER_MODE:-oom} in
value)
	echo 'Traceback (most recent call last):' >&2
	echo '  File "train.py", line 12, in <module>' >&2
	echo 'ValueError: bad config' >&2
	exit 3
	;;
kill)
	if [ "$tries" = 1 ]; then
		sleep 0.5
		n=$(awk '/^oom_kill / { print $2 }' "$LADDER_EVENTS")
		sed -i "s/^oom_kill .*/oom_kill $((n + 1))/" "$LADDER_EVENTS"
		kill -9 $$
	fi
	echo "{'loss': 1.234, 'learning_rate': 2e-05, 'epoch': 0.01}"
	exit 0
	;;
sleep)
	if [ "$tries" = 2 ]; then
		sleep 2
	fi
	;;
esac
if [ "$seq" -le "${LADDER_FIT_SEQ:-512}" ] && [ "$batch" -le "${LADDER_FIT_BATCH:-1000000}" ]; then
	echo "{'loss': 1.234, 'learning_rate': 2e-05, 'epoch': 0.01}"
	exit 0
fi
cat >&2 <<'TB'
Traceback (most recent call last):
  File "/work/train.py", line 88, in <module>
    trainer.train()
  File "/usr/lib/python3/dist-packages/transformers/trainer.py", line 2123, in train
    return inner_training_loop(
  File "/usr/lib/python3/dist-packages/transformers/trainer.py", line 3612, in training_step
    self.accelerator.backward(loss, **kwargs)
  File "/usr/lib/python3/dist-packages/torch/autograd/__init__.py", line 347, in backward
    _engine_run_backward(
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 119.70 GiB of which 1.23 GiB is free. Including non-PyTorch memory, this process has 110.45 GiB memory in use. Of the allocated memory 104.12 GiB is allocated by PyTorch, and 5.01 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)
TB
exit 1
