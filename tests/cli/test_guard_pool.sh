#!/bin/sh
# SPDX-License-Identifier: MIT
# The runtime guard in the ladder's order, on the pool model: a job under
# the MemFree floor whose page cache covers it is left alone (it ends by
# itself); one with nothing reclaimable is stopped within --guard-confirm's
# window, not before; a flush's effect (modelled by rewriting the fixture's
# meminfo: a --procfs tree's drop_caches is never written) brings it back;
# and for real: a slow leak beside a large page cache is still caught.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
PC=$BUILD_DIR/progress_child
NONV="env SPARKOPS_NVML_LIB=/nonexistent/libnvidia-ml.so.1"
cd "$TMP" || exit 2

# meminfo NAME FREE_KIB CACHED_KIB: a writable copy of the gb10-idle tree with
# those figures (the issue's: MemFree 5 GiB, Cached 17 GiB, MemAvailable 21 GiB)
meminfo() {
	sed -e "s/^MemFree:.*/MemFree:        $2 kB/" -e "s/^Cached:.*/Cached:         $3 kB/" \
		-e "s/^Buffers:.*/Buffers:        0 kB/" -e "s/^Shmem:.*/Shmem:          0 kB/" \
		-e "s/^Mapped:.*/Mapped:         0 kB/" -e "s/^SReclaimable:.*/SReclaimable:   0 kB/" \
		-e "s/^MemAvailable:.*/MemAvailable:   $(($2 + $3 - 1048576)) kB/" "$FIX/gb10-idle/proc/meminfo" >"$1"
}
GiBk=1048576
cp -r "$FIX/gb10-idle" fx
meminfo fx/proc/meminfo $((5 * GiBk)) $((17 * GiBk))
FX="--procfs $TMP/fx/proc --sysfs $TMP/fx/sys"

run $S run --guard-confirm 0 -- true
expect_rc 2 "--guard-confirm 0 is refused"
run $S run --guard-confirm soon -- true
expect_rc 2 "--guard-confirm needs a duration"

# 1. MemFree 5 GiB under a 6 GiB floor, 17 GiB reclaimable: not stopped
run $NONV $S run --interval 0.2 --log a.csv --summary a.json --guard-min-free 6GiB $FX -- sleep 2
expect_rc 0 "cache covers the floor: the job ends by itself (exit 0)"
expect_err 'guard: free memory 5\.0 GiB is 1024 MiB below the 6\.0 GiB floor \(17\.0 GiB reclaimable\)' \
	"the warning names what is reclaimable"
expect_err "guard: evicted the job's own files" "what costs nothing first: the job's own files"
expect_err 'guard: not stopping the job: 5\.0 GiB free is under the floor, but 17\.0 GiB of page cache is reclaimable' \
	"the guard says why it leaves the job alone"
! grep -q 'stopping the job: SIGTERM' "$ERR"
_report $? "no SIGTERM"
grep -q ',event,guard_hold,free_bytes=' a.csv && grep -q ',event,guard_evict,freed_bytes=' a.csv &&
	! grep -q ',event,guard_term,' a.csv
_report $? "each step is a log row (warn, evict, hold), no term row"
OUT=a.json
expect_jq '.ended_by == "exit" and .exit_code == 0' "summary: ended by the job's own exit"
expect_jq '[.guard_actions[].action][0:3] == ["warn","evict","hold"]' "summary: warn, evict, hold"
[ "$(cat fx/proc/sys/vm/drop_caches 2>/dev/null)" != 3 ]
_report $? "the fixture's drop_caches is not written (no --guard-flush)"

# 1b. --guard-evict DIR: the user's cold files under DIR are evicted too
# (a 128 MiB file read into the page cache, on a disk, not tmpfs)
CD="$BUILD_DIR/guard-cold.$$"
mkdir -p "$CD"
if [ "$(stat -f -c %T "$CD")" != tmpfs ]; then
	dd if=/dev/zero of="$CD/shard.bin" bs=1M count=128 conv=fsync status=none && read_in "$CD/shard.bin"
	run $NONV $S run --interval 0.2 --log e.csv --guard-min-free 6GiB --guard-evict "$CD" $FX -- sleep 1
	expect_rc 0 "--guard-evict: the job still ends by itself"
	expect_err "guard: evicted the job's own files from the page cache \([0-9]+ files? and 1 under --guard-evict\)" \
		"the cold file under --guard-evict is evicted too"
	freed=$(awk -F, '$4=="guard_evict" { split($5, a, "freed_bytes="); split(a[2], b, " "); print b[1]; exit }' e.csv)
	[ -n "$freed" ] && [ "$freed" -ge $((100 * 1048576)) ]
	_report $? "its pages are what the eviction gave back (${freed:-?} bytes)"
	grep -q ',event,guard_evict,.*cold_files=1 ' e.csv
	_report $? "the log row counts it (cold_files=1)"
else
	echo "# skip: $CD is tmpfs (shmem is not evicted)"
fi
rm -rf "$CD"

# 2. nothing reclaimable (100 MiB cached): stopped within the window, not before
meminfo fx/proc/meminfo $((5 * GiBk)) 102400
run $NONV $S run --interval 0.2 --log b.csv --summary b.json --guard-min-free 6GiB --guard-confirm 1s $FX -- sleep 20
expect_rc 143 "nothing reclaimable: the job is stopped (SIGTERM)"
expect_err 'stopping the job: SIGTERM to 1 process .*nothing reclaimable is left to take' "the stop says why"
# the time from the warning to the stop: the window (1 s), not 0.1 s and not much more
w=$(awk -F, '$4=="guard_warn" {w=$2} $4=="guard_term" {printf "%d", ($2 - w) * 1000; exit}' b.csv)
echo "# warn -> term: ${w:-?} ms with --guard-confirm 1s"
[ -n "$w" ] && [ "$w" -ge 950 ] && [ "$w" -lt 3000 ]
_report $? "stopped after the 1 s window (${w:-?} ms)"
run $NONV $S run --interval 0.2 --log c.csv --guard-min-free 6GiB $FX -- sleep 20
expect_rc 143 "the default window stops it too"
w=$(awk -F, '$4=="guard_warn" {w=$2} $4=="guard_term" {printf "%d", ($2 - w) * 1000; exit}' c.csv)
echo "# warn -> term: ${w:-?} ms with the default window"
[ -n "$w" ] && [ "$w" -ge 2950 ] && [ "$w" -lt 6000 ]
_report $? "the default window is 3 s (${w:-?} ms)"

# 3. a flush's effect, modelled: the pool comes back within the window (the
# job rewrites the fixture's meminfo in place after 0.5 s), the job is not stopped
meminfo after.meminfo $((20 * GiBk)) 102400
run $NONV $S run --interval 0.2 --log d.csv --summary d.json --guard-min-free 6GiB $FX -- \
	sh -c "sleep 0.5; cp after.meminfo fx/proc/meminfo.new && mv fx/proc/meminfo.new fx/proc/meminfo; sleep 1"
expect_rc 0 "the pool back over the floor within the window: the job ends by itself"
expect_err 'guard: back above the floor \(20\.0 GiB free\)' "the recovery is said"
grep -q ',event,guard_recovered,free_bytes=' d.csv && ! grep -q ',event,guard_term,' d.csv
_report $? "the recovery is a log row, no term row"

# 4. for real: a slow leak (32 MiB every 100 ms) beside a 1 GiB page cache is
# still caught, within 512 MiB of a floor set 600 MiB under MemFree + reclaimable
pool_kib() {
	awk '/^MemFree:/ {f=$2} /^Buffers:/ {b=$2} /^Cached:/ {c=$2} /^Shmem:/ {s=$2} /^Mapped:/ {m=$2}
	     /^SReclaimable:/ {r=$2} END { x=b+c-s; if (x<0) x=0; x-=m; if (x<0) x=0; print f+x+r }' /proc/meminfo
}
free_kib=$(awk '/^MemFree:/ {print $2}' /proc/meminfo)
if [ "${free_kib:-0}" -gt $((6 * GiBk)) ]; then
	dd if=/dev/zero of=cached.bin bs=1M count=1024 status=none && cat cached.bin >/dev/null
	floor_kib=$(($(pool_kib) - 600 * 1024))
	run $NONV $S run --interval 1 --log leak.csv --summary leak.json --guard-min-free "${floor_kib}K" --guard-grace 2 -- \
		$PC alloc 32 100 3000
	expect_rc 143 "a real slow leak beside a large page cache is stopped by the guard"
	expect_no_out 'reached' "it never reached its 3000 MiB"
	under=$(awk -F, -v fl=$((floor_kib * 1024)) '$4=="guard_term" { split($5, a, " free_bytes="); split(a[2], b, " "); split($5, c, "reclaimable_bytes="); split(c[2], d, " "); print int((fl - b[1] - d[1]) / 1048576) }' leak.csv | head -1)
	echo "# slow leak: stopped ${under:-?} MiB under the floor"
	[ -n "$under" ] && [ "$under" -lt 512 ]
	_report $? "the slow leak is stopped within 512 MiB of the floor (${under:-?} MiB under)"
	rm -f cached.bin
else
	echo "# skipping the real slow-leak case: less than 6 GiB free"
fi
done_testing
