#!/bin/sh
# SPDX-License-Identifier: MIT
# run --guard-load for real, as root on this machine: the job floods the page
# cache (a 2.5 GiB file written with dd) with the floor just under today's
# MemFree, then prints vLLM's readiness line. The receipts must show a flush
# and a compaction that brought MemFree back above the floor, the guard must
# stop at readiness, and the vm sysctls (min_free_kbytes and the others) must
# be what they were. Skips (and passes) when not root, without compact_memory,
# or when memory is too small. The flood file is removed.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
MIB=2560

skip() { echo "# skip: $1"; done_testing; exit 0; }
[ "$(id -u)" = 0 ] || skip "the load guard's flush and compaction need root (uid $(id -u))"
[ -w /proc/sys/vm/compact_memory ] || skip "no writable /proc/sys/vm/compact_memory here"
free_kb=$(awk '/^MemFree:/ { print $2 }' /proc/meminfo)
total_kb=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)
[ "$total_kb" -ge $((8 * 1048576)) ] && [ "$free_kb" -ge $((MIB * 1024 + 2 * 1048576)) ] ||
	skip "memory too small for a ${MIB} MiB flood (MemFree ${free_kb} kB)"
DIR="$BUILD_DIR"
[ "$(stat -f -c %T "$DIR")" != tmpfs ] || skip "$DIR is tmpfs (shmem is not dropped)"
F="$DIR/load-guard-flood.$$"
trap 'rm -f "$F"; rm -rf "$TMP"' EXIT

vm() { for k in min_free_kbytes watermark_boost_factor watermark_scale_factor compaction_proactiveness extfrag_threshold; do
	printf '%s=%s ' "$k" "$(cat /proc/sys/vm/$k 2>/dev/null)"; done; }
vm0=$(vm)
sync
echo 3 >/proc/sys/vm/drop_caches
free_kb=$(awk '/^MemFree:/ { print $2 }' /proc/meminfo)
FLOOR_KB=$((free_kb - 1048576)) # 1 GiB under MemFree: the flood crosses it
LOG="$TMP/lg.csv"
R="$LOG.receipts.jsonl"
cd "$TMP" || exit 2
# the job waits on the guard's receipts, not on the clock: after the flood,
# until an action brought MemFree back above the floor (at most 30 s), then
# it prints the readiness line and waits for the guard's stop (at most 10 s)
cat >"$TMP/job.sh" <<'JOB'
dd if=/dev/zero of="$1" bs=1M count="$2" status=none
i=0
while [ $i -lt 300 ] && ! awk -v f="$3" '/"event":"action"/ && match($0, /"mem_free_after_bytes":[0-9]+/) {
	if (substr($0, RSTART + 23, RLENGTH - 23) + 0 > f + 0) ok = 1 } END { exit !ok }' "$4" 2>/dev/null; do
	sleep 0.1; i=$((i + 1))
done
echo 'INFO:     Application startup complete.'
i=0
while [ $i -lt 100 ] && ! grep -q '"event":"stop"' "$4" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
JOB
run $S run --interval 1 --log "$LOG" --guard-load --guard-floor "${FLOOR_KB}KiB" -- \
	sh "$TMP/job.sh" "$F" "$MIB" "$((FLOOR_KB * 1024))" "$R"
expect_rc 0 "the job ran under the load guard"
[ -s "$R" ]
_report $? "receipts written next to the log ($R)"
python3 - "$R" "$((FLOOR_KB * 1024))" >"$TMP/py" 2>&1 <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
floor = int(sys.argv[2])
acts = [r for r in rows if r["event"] == "action"]
assert rows[0]["event"] == "start" and rows[0]["mode"] == "root", rows[0]
assert acts, "no action"
a = acts[0]
assert a["action"] == "flush+compact", a
assert "3 > vm/drop_caches (after sync)" in a["wrote"] and "1 > vm/compact_memory" in a["wrote"], a
assert a["mem_free_before_bytes"] < floor, (a, floor)
assert any(x["mem_free_after_bytes"] > floor for x in acts), (acts, floor)
for k in ("flush_ms", "compact_ms", "ms", "free_2mib_before_bytes", "free_2mib_after_bytes", "time_unix"):
    assert k in a, k
stop = [r for r in rows if r["event"] == "stop"]
assert stop and stop[0]["reason"] == "ready", stop
end = rows[-1]
assert end["event"] == "end" and end["sysctls_changed"] == [] and end["sysctls_touched"] == [], end
print("actions=%d first: %s -> %s bytes free in %.0f ms" % (len(acts), a["mem_free_before_bytes"], a["mem_free_after_bytes"], a["ms"]))
PY
rc=$?
cat "$TMP/py" | sed 's/^/# /'
_report $rc "receipts: flush + compaction under the floor, MemFree back above it, stopped at readiness"
grep -q ',event,load_guard,action=flush+compact ' "$LOG"
_report $? "the action is an event row in the CSV log"
grep -q ',event,load_guard_end,reason=ready ' "$LOG"
_report $? "the guard's stop at readiness is an event row"
expect_err 'load guard: the job is ready \(vLLM\)' "the stop at readiness is said"
[ "$(vm)" = "$vm0" ]
_report $? "vm sysctls unchanged ($vm0)"
[ ! -e "$F" ] || rm -f "$F"
_report 0 "the flood file is removed"

# a readiness regex that never matches: the deadline ends the guard, and says so
# (the job lasts until the guard's stop is in its receipts, at most 10 s)
until_stop='i=0; while [ $i -lt 100 ] && ! grep -q "\"event\":\"stop\"" "$0" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done'
run $S run --interval 1 --log "$TMP/d.csv" --guard-load --ready 'never-printed' --guard-deadline 1.5 -- \
	sh -c "$until_stop" "$TMP/d.csv.receipts.jsonl"
expect_rc 0 "a job whose readiness line never comes"
expect_err 'deadline passed and the readiness line never came \(--ready did not match\)' "the deadline ends the guard with a line saying so"
grep -q '"reason":"deadline"' "$TMP/d.csv.receipts.jsonl"
_report $? "the receipt says deadline"
# a stop file ends it too
touch "$TMP/stop"
run $S run --interval 1 --log "$TMP/s.csv" --guard-load --guard-stop-file "$TMP/stop" -- \
	sh -c "$until_stop" "$TMP/s.csv.receipts.jsonl"
grep -q '"reason":"stop_file"' "$TMP/s.csv.receipts.jsonl"
_report $? "the stop file ends the guard"
run $S run --ready x -- true
expect_rc 2 "--ready without --guard-load is a usage error"
done_testing
