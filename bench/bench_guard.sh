#!/bin/sh
# SPDX-License-Identifier: MIT
# The load guard (run --guard-load): its reaction time, floor crossed -> flush
# (and compaction) done, under a page-cache flood of about 2 GiB/s (dd writing
# 200 MiB every 0.1 s), and the per-sample cost of reading /proc/buddyinfo
# beside /proc/meminfo. The reaction needs root (the flush); otherwise only
# the cost is measured. The flood file is removed.
BUILD=${1:-build}
cd "$(dirname "$0")/.." || exit 2
TMP=$(mktemp -d)
F="$BUILD/bench-guard-flood.$$"
trap 'rm -rf "$TMP"; rm -f "$F"' EXIT
cc -O2 -std=c11 -D_GNU_SOURCE -Isrc bench/guard_probe.c "$BUILD/libsparkops.a" \
	$(pkg-config --libs jansson 2>/dev/null || echo -ljansson) -lm -lpthread -ldl -o "$TMP/gp" || exit 1

echo "per-sample cost (20000 reads each):"
"$TMP/gp" cost 20000 | awk '{ printf "  /proc/buddyinfo %s ns per read, /proc/meminfo %s ns (%s)\n", $2, $4, $6 }'

if [ "$(id -u)" != 0 ]; then
	echo "reaction time: skipped (the flush needs root)"
	exit 0
fi
free_kb=$(awk '/^MemFree:/ { print $2 }' /proc/meminfo)
if [ "$free_kb" -lt $((6 * 1048576)) ]; then
	echo "reaction time: skipped (MemFree under 6 GiB)"
	exit 0
fi
for round in 1 2 3; do
	sync; echo 3 >/proc/sys/vm/drop_caches
	free_kb=$(awk '/^MemFree:/ { print $2 }' /proc/meminfo)
	floor=$(( (free_kb - 1536 * 1024) * 1024 )) # 1.5 GiB under MemFree
	"$TMP/gp" cross "$floor" 30 >"$TMP/cross" &
	cp=$!
	"$BUILD/sparkops" run --interval 1 --log "$TMP/g$round.csv" --guard-load --guard-floor "${floor}B" -- \
		sh -c "i=0; while [ \$i -lt 20 ]; do dd if=/dev/zero of='$F' bs=1M count=200 seek=\$((i*200)) conv=notrunc status=none; sleep 0.1; i=\$((i+1)); done; echo 'Application startup complete'" \
		>/dev/null 2>"$TMP/err$round"
	wait $cp
	rm -f "$F"
	python3 - "$TMP/g$round.csv.receipts.jsonl" "$(cat "$TMP/cross")" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
acts = [r for r in rows if r["event"] == "action"]
if not acts or not sys.argv[2]:
    print("  round: no crossing or no action"); sys.exit(0)
a, cross = acts[0], float(sys.argv[2])
done = a["time_unix"]
start = done - a["ms"] / 1000
print("  round: crossed -> acting %4.0f ms, -> flush done %5.0f ms (flush %.0f ms), -> compaction done %5.0f ms; %d action(s); MemFree %.1f -> %.1f GiB"
      % ((start - cross) * 1000, (start - cross) * 1000 + a.get("flush_ms", 0), a.get("flush_ms", 0),
         (done - cross) * 1000, len(acts), a["mem_free_before_bytes"] / 2**30, a["mem_free_after_bytes"] / 2**30))
PY
done
