#!/bin/sh
# SPDX-License-Identifier: MIT
# Reading a 70B-class model folder: 30 header-only sparse shards with
# Llama-3.1-70B's tensor names and shapes (BF16, ~141 GB apparent size, no
# data blocks on disk). Times `sparkops plan FOLDER --json` (or, when the
# plan command is not in this build, bench/model_load.c: the same
# sp_model_load the command calls), counts the bytes read (the tool's own
# count and, with strace, every read/pread64 on the folder's files), and runs
# Python's header read of the same folder beside it.
BUILD=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
RUNS=${BENCH_RUNS:-20}
for tool in python3 jq; do
	command -v $tool >/dev/null 2>&1 || { echo "skip: $tool is not installed (it makes the folder / reads the JSON)"; exit 0; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dir="$tmp/llama-3.1-70b"
python3 tests/fixtures/models/mkmodels.py --sparse-70b "$dir" >/dev/null || exit 1
apparent=$(du -s --apparent-size -B1 "$dir" | cut -f1)
ondisk=$(du -s -B1 "$dir" | cut -f1)
echo "folder: 30 shards, $apparent bytes apparent, $ondisk bytes on disk"

if "$BUILD/sparkops" plan --help >/dev/null 2>&1; then
	what="sparkops plan --json"
	run_one() { "$BUILD/sparkops" plan "$dir" --json --budget 128G; }
else
	what="model_load driver (no plan command in this build)"
	cc -O2 -std=c11 -D_GNU_SOURCE -Isrc bench/model_load.c "$BUILD/libsparkops.a" \
		$(pkg-config --libs jansson 2>/dev/null || echo -ljansson) -lm -o "$tmp/model_load" || exit 1
	run_one() { "$tmp/model_load" "$dir"; }
fi
echo "timing: $what, $RUNS runs"
run_one >"$tmp/one.json" 2>"$tmp/one.err"
rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 1 ]; then
	cat "$tmp/one.err"
	exit 1
fi
self=$(jq -r '.bytes_read // .model.bytes_read // empty' "$tmp/one.json" 2>/dev/null)

now() { date +%s.%N; }
t0=$(now)
i=0
while [ $i -lt "$RUNS" ]; do run_one >/dev/null 2>&1; i=$((i + 1)); done
t1=$(now)
c_ms=$(echo "$t0 $t1 $RUNS" | awk '{printf "%.2f", ($2 - $1) * 1000 / $3}')

t0=$(now)
i=0
while [ $i -lt "$RUNS" ]; do python3 bench/st_headers.py "$dir" >"$tmp/py.json" || exit 1; i=$((i + 1)); done
t1=$(now)
py_ms=$(echo "$t0 $t1 $RUNS" | awk '{printf "%.2f", ($2 - $1) * 1000 / $3}')
py_how=$(jq -r .how "$tmp/py.json")

echo "sparkops: ${c_ms} ms per run; bytes read (its own count): ${self:-n/a}"
if command -v strace >/dev/null 2>&1; then
	if [ -x "$tmp/model_load" ]; then
		strace -f -y -e trace=read,pread64 -o "$tmp/strace" "$tmp/model_load" "$dir" >/dev/null 2>&1
	else
		strace -f -y -e trace=read,pread64 -o "$tmp/strace" "$BUILD/sparkops" plan "$dir" --json --budget 128G >/dev/null 2>&1
	fi
	traced=$(grep -F "$dir" "$tmp/strace" | sed -n 's/.*= \([0-9][0-9]*\)$/\1/p' | awk '{s += $1} END {print s + 0}')
	echo "sparkops: bytes read from the folder's files (strace): $traced"
fi
strace -f -y -e trace=read,pread64 -o "$tmp/strace.py" python3 bench/st_headers.py "$dir" >/dev/null 2>&1 &&
	pytraced=$(grep -F "$dir" "$tmp/strace.py" | sed -n 's/.*= \([0-9][0-9]*\)$/\1/p' | awk '{s += $1} END {print s + 0}')
echo "python ($py_how header read): ${py_ms} ms per run; bytes read from the folder (strace): ${pytraced:-n/a}"
echo "ratio per process: python / sparkops = $(echo "$py_ms $c_ms" | awk '{printf "%.1f", $1 / $2}')x"
# in-process, without interpreter or process start-up: 100 loads in one process
if [ -x "$tmp/model_load" ] || cc -O2 -std=c11 -D_GNU_SOURCE -Isrc bench/model_load.c "$BUILD/libsparkops.a" \
	$(pkg-config --libs jansson 2>/dev/null || echo -ljansson) -lm -o "$tmp/model_load"; then
	t0=$(now)
	"$tmp/model_load" "$dir" 100 >/dev/null
	t1=$(now)
	c_in=$(echo "$t0 $t1" | awk '{printf "%.3f", ($2 - $1) * 1000 / 100}')
	py_in=$(python3 bench/st_headers.py "$dir" 100 | jq -r .ms_per_load)
	echo "in-process: sparkops ${c_in} ms per load, python ${py_in} ms per load," \
		"ratio $(echo "$py_in $c_in" | awk '{printf "%.1f", $1 / $2}')x"
fi
# the same totals both ways
c_bf16=$(jq -r '.weight_bytes // .model.weight_bytes // empty' "$tmp/one.json" 2>/dev/null)
py_bf16=$(jq -r '.bytes_by_dtype.BF16' "$tmp/py.json")
[ -n "$c_bf16" ] && echo "weight bytes: sparkops $c_bf16, python $py_bf16"
if [ -n "$self" ] && [ "$self" -gt 10485760 ]; then
	echo "FAIL: read more than 10 MiB for a header-only folder"
	exit 1
fi
exit 0
