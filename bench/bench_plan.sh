#!/bin/sh
# SPDX-License-Identifier: MIT
# sparkops plan on a Llama-3.1-70B-shaped folder of 30 shards (real headers,
# sparse data: ~141 GB apparent): time and bytes read. Reading must stay in
# the kilobytes. Against Python's safetensors header read where installed.
BUILD=${1:-build}
S="$BUILD/sparkops"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 bench/mk70b.py "$tmp/llama-70b" || exit 1
apparent=$(du -sb --apparent-size "$tmp/llama-70b" | cut -f1)
ondisk=$(du -sk "$tmp/llama-70b" | cut -f1)
echo "folder: 30 shards, $apparent bytes apparent, $ondisk KiB on disk"
P="$S plan $tmp/llama-70b --method qlora --budget 119GiB --json"
$P >"$tmp/out.json" || true
jq -r '"sparkops: params \(.params), tensor bytes \(.model.weight_bytes), files read \(.model.files_read), bytes read \(.model.bytes_read)"' "$tmp/out.json"
br=$(jq .model.bytes_read "$tmp/out.json")
if [ "$br" -lt 10485760 ]; then echo "ok: $br bytes read (< 10 MiB) of $apparent"; else echo "FAIL: read $br bytes"; exit 1; fi
# bytes the process read through the kernel, headers and all (strace: read/pread sizes)
if command -v strace >/dev/null 2>&1; then
	strace -f -e trace=read,pread64 -o "$tmp/trace" $P >/dev/null 2>&1
	awk -F'= ' '/^[0-9]+ +(read|pread64)\(/ { n = $NF + 0; if (n > 0) s += n } END { printf "syscalls: %d bytes read in total (libraries, /proc and headers included)\n", s }' "$tmp/trace"
fi
if command -v hyperfine >/dev/null 2>&1; then
	hyperfine -N --warmup 3 --runs 30 "$P" 2>/dev/null | grep -E 'Time|Range'
	if python3 -c 'import safetensors' 2>/dev/null; then
		cat >"$tmp/st.py" <<PY
import glob, safetensors
n = 0
for f in sorted(glob.glob("$tmp/llama-70b/*.safetensors")):
    with safetensors.safe_open(f, "np") as h:
        n += len(list(h.keys()))
PY
		hyperfine -N --warmup 3 --runs 30 "python3 $tmp/st.py" 2>/dev/null | grep -E 'Time|Range'
	else
		# the same work by hand: the 8-byte length and the JSON header of each shard
		cat >"$tmp/st.py" <<PY
import glob, json, struct
n = 0
for f in sorted(glob.glob("$tmp/llama-70b/*.safetensors")):
    with open(f, "rb") as h:
        (k,) = struct.unpack("<Q", h.read(8))
        n += len(json.loads(h.read(k)))
PY
		echo "python safetensors not installed (no Debian package): Python struct+json header read instead"
		hyperfine -N --warmup 3 --runs 30 "python3 $tmp/st.py" 2>/dev/null | grep -E 'Time|Range'
	fi
fi
