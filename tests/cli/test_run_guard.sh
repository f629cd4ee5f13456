#!/bin/sh
# SPDX-License-Identifier: MIT
# The pool guard: against a fixture (warn, flush, SIGTERM, SIGKILL after the
# grace), and for real on this machine: a job that allocates step by step is
# stopped just past a floor set a few hundred MiB under the current MemFree.
. "$(dirname "$0")/lib.sh"
# these cases flush into a fixture tree of our own: the test switch (docs/RELIABILITY.md)
export SPARKOPS_TEST_PROCFS_WRITES=1
S=$SPARKOPS
PC=$BUILD_DIR/progress_child
NONV="env SPARKOPS_NVML_LIB=/nonexistent/libnvidia-ml.so.1"
cd "$TMP" || exit 2
cp -r "$FIX/gb10-idle" fx
mkdir -p fx/proc/sys/vm
: >fx/proc/sys/vm/drop_caches
FX="--procfs $TMP/fx/proc --sysfs $TMP/fx/sys"

run $S run --guard-min-free lots -- true
expect_rc 2 "a bad --guard-min-free"
run $S run --guard-psi-full 0 -- true
expect_rc 2 "--guard-psi-full 0 is refused"

# the fixture's MemFree (92 GiB) is under a 200 GiB floor from the start
run $NONV $S run --interval 0.2 --log g1.csv --summary g1.json --guard-min-free 200G $FX -- $PC sleep 20
expect_rc 143 "the guard stops the job with SIGTERM (128+15)"
expect_err 'guard: free memory .* below the 200.0 GiB floor' "the warning comes first"
expect_err 'guard: stopping the job: SIGTERM to 1 process' "then SIGTERM, said on stderr"
grep -q ',event,guard_warn,free_bytes=' g1.csv && grep -q ',event,guard_term,signal=15 ' g1.csv
_report $? "warn and term are log rows"
OUT=g1.json
expect_jq '.ended_by == "guard"' "summary: ended_by guard"
# the fixture's page cache (21 GiB) cannot lift 92 GiB over 200 GiB: the job's own
# files are evicted first (what costs nothing), then the window, then SIGTERM
expect_jq '[.guard_actions[].action] == ["warn","evict","term"]' "summary: the guard's actions in order"

if [ "$(id -u)" = 0 ]; then
	run $NONV $S run --interval 0.2 --log g2.csv --guard-min-free 200G --guard-flush $FX -- $PC sleep 20
	expect_rc 143 "with --guard-flush as root: still stopped when the flush does not help"
	[ "$(cat fx/proc/sys/vm/drop_caches)" = 3 ]
	_report $? "the flush wrote 3 to <procfs>/sys/vm/drop_caches"
	expect_err 'guard: flushed the page cache: .* freed' "the flush is said and measured"
	grep -q ',event,guard_flush,freed_bytes=' g2.csv
	_report $? "the flush is a log row"
fi

# a job that ignores SIGTERM gets SIGKILL after --guard-grace
run $NONV $S run --interval 0.2 --log g3.csv --summary g3.json --guard-min-free 200G --guard-grace 0.3 $FX -- \
	sh -c 'trap "" TERM; while :; do sleep 0.05; done'
expect_rc 137 "SIGKILL after the grace (128+9)"
expect_err 'did not stop within 0.3s: SIGKILL' "the kill is said"
OUT=g3.json
expect_jq '[.guard_actions[].action] == ["warn","evict","term","kill"] and .ended_by == "guard"' "summary: warn, evict, term, kill"

# --- for real -------------------------------------------------------------------------------
# the guard's floor is on the pool: MemFree plus what a flush gives back
# (probe/poolmodel.h), so the floor is set a few hundred MiB under that
pool_kib() {
	awk '/^MemFree:/ {f=$2} /^Buffers:/ {b=$2} /^Cached:/ {c=$2} /^Shmem:/ {s=$2} /^Mapped:/ {m=$2}
	     /^SReclaimable:/ {r=$2} END { x=b+c-s; if (x<0) x=0; x-=m; if (x<0) x=0; print f+x+r }' /proc/meminfo
}
free_kib=$(awk '/^MemFree:/ {print $2}' /proc/meminfo)
head_mib=600
# the job's goal is 4 GiB past the floor: the other scripts of the suite,
# running beside this one, free and take memory too (a fresh-clone run saw
# the pool stay level for 1.3 GiB of the job's growth, their exits giving
# back what it took), and the guard is judged on the pool, not on the job
goal_mib=$((head_mib + 4096))
if [ "${free_kib:-0}" -gt $(((goal_mib + 3072) * 1024)) ]; then
	floor_kib=$(($(pool_kib) - head_mib * 1024))
	run $NONV $S run --interval 1 --log real.csv --summary real.json --guard-min-free "${floor_kib}K" --guard-grace 2 -- \
		$PC alloc 64 50 $goal_mib
	expect_rc 143 "a real allocator (64 MiB every 50 ms) is stopped by the guard"
	expect_no_out 'reached' "it never reached its $goal_mib MiB"
	OUT=real.json
	expect_jq '.ended_by == "guard"' "the summary says ended_by guard"
	# how far under the floor MemFree was when the guard acted
	under=$(awk -F, -v fl=$((floor_kib * 1024)) '$4=="guard_term" { for (i = 1; i <= NF; i++) if ($i ~ /free_bytes=/) { split($i, a, " free_bytes="); split(a[2], b, " "); split($i, c, "reclaimable_bytes="); split(c[2], d, " "); print int((fl - b[1] - d[1]) / 1048576) } }' real.csv | head -1)
	echo "# real guard: the job was stopped ${under:-?} MiB under a floor ${head_mib} MiB below MemFree + reclaimable"
	[ -n "$under" ] && [ "$under" -lt 512 ]
	_report $? "the guard acted within 512 MiB of the floor (${under:-?} MiB under)"
else
	echo "# skipping the real guard test: less than $(((goal_mib + 3072) / 1024)) GiB free"
fi
done_testing
