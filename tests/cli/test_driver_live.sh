#!/bin/sh
# SPDX-License-Identifier: MIT
# The driver's warning signs live in run and watch: new NVIDIA lines in the
# kernel log (--kmsg FILE, the code path of /dev/kmsg) during the run are
# one driver_error row per kind and sample with the count, one line on
# stderr; what the log held before the start is not reported. And the log's
# fsync policy: every row at once while the pool is within the guard's
# margin of its floor, only at the interval (and the end) when it is roomy.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
NONV="env SPARKOPS_NVML_LIB=/nonexistent/libnvidia-ml.so.1"
cd "$TMP" || exit 1
OOM='3,9001,170000000,-;NVRM: nvCheckOkFailedNoLog: Check failed: Out of memory [NV_ERR_NO_MEMORY] (0x00000051) returned from _memdescAllocInternal(pMemDesc) @ mem_desc.c:1359'
XID='4,9004,170100000,-;NVRM: Xid (PCI:000f:01:00): 31, pid=1234, name=python3, Ch 00000008, intr 00000000'

# 1. lines appended while the job runs
cp "$FIX/kmsg/wedge.kmsg" live.kmsg
$NONV "$S" run $(sysroot gb10-idle) --kmsg live.kmsg --interval 0.2 --log k.csv --metrics-listen 127.0.0.1:0 \
	-- sleep 2 >k.out 2>k.err &
RP=$!
sleep 0.7
{ echo "$OOM"; echo "$OOM"; echo "$OOM"; echo "$XID"; } >>live.kmsg
if command -v curl >/dev/null 2>&1; then
	A=$(sed -n 's|^.*metrics at http://\(.*\)/metrics$|\1|p' k.err)
	i=0
	# the fixture's 22 and the 3 new ones: the counter is the exporters' (since sparkops began reading)
	until { curl -s --max-time 2 "http://$A/metrics" >k.prom && grep -q 'kind="nvrm_oom"} 25$' k.prom; } ||
		[ $i -ge 20 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	grep -q '^sparkops_driver_errors_total{kind="nvrm_oom"} 25$' k.prom &&
		grep -q '^sparkops_driver_errors_total{kind="xid"} 3$' k.prom
	RC=0
	_report $? "--metrics-listen: sparkops_driver_errors_total counts the log's lines, the new ones included"
else
	skip_case "--metrics-listen: sparkops_driver_errors_total" "curl is not installed"
fi
wait $RP
RC=$?
cp k.csv "$OUT"
cp k.err "$ERR"
expect_rc 0 "run --kmsg FILE: the job's exit code"
expect_out ',driver_error,.*kind=nvrm_oom count=3' "the CSV has the driver_error row with the count of new nvrm_oom lines"
expect_out ',driver_error,.*kind=xid count=1' "the xid line: its own row"
expect_no_out 'count=22' "what the log held before the start is not reported"
expect_err 'NVIDIA driver logged 3 nvrm_oom lines' "stderr says it at once"
expect_err "^log: [1-9][0-9]* rows? fsync'd at once \(pressure\), else every 60s" \
	"the summary says how many rows were fsync'd at once (driver errors arriving)"

run $NONV "$S" run $(sysroot gb10-idle) --kmsg "$TMP/none.kmsg" -- true
expect_rc 2 "--kmsg missing: usage error"
expect_err "--kmsg '.*none.kmsg'" "--kmsg missing: names it"

# 2. --guard-load: out-of-memory lines from the driver during the load are a
# trigger like a MemFree dip, with a receipt that says so (a roomy fixture:
# no floor is crossed; the flush into a --procfs tree is refused, the
# receipt is written all the same)
cp "$FIX/kmsg/wedge.kmsg" lg.kmsg
$NONV "$S" run $(sysroot gb10-idle) --kmsg lg.kmsg --interval 0.2 --log lg.csv --guard-load -- \
	sh -c 'sleep 1.6; echo "INFO:     Application startup complete."; sleep 0.3' >lg.out 2>lg.err &
RP=$!
sleep 0.8
echo "$OOM" >>lg.kmsg
wait $RP
RC=$?
cp lg.csv.receipts.jsonl "$OUT" 2>/dev/null || : >"$OUT"
cp lg.err "$ERR"
expect_rc 0 "run --guard-load --kmsg FILE"
[ "$(grep -c '"trigger":"driver_oom"' "$OUT")" = 1 ]
_report $? "one action, its receipt's trigger driver_oom (the lines from before the start are not one)"
expect_err 'load guard: .*\(the driver logged out-of-memory lines\)' "stderr says why it acted"

# 3. fsync per row near the guard's floor, not with a roomy pool
meminfo() { # FILE MEMFREE_KIB
	sed -e "s/^MemFree:.*/MemFree:        $2 kB/" "$FIX/gb10-idle/proc/meminfo" >"$1"
}
cp -r "$FIX/gb10-idle" fx
FX="--procfs $TMP/fx/proc --sysfs $TMP/fx/sys"
if command -v strace >/dev/null 2>&1; then
	# 7 GiB free, a 6 GiB floor: within its margin (a quarter of the floor, at least 1 GiB), not under it
	meminfo fx/proc/meminfo $((7 * 1048576))
	strace -f -o near.st -e trace=fsync,fdatasync $NONV "$S" run --interval 0.2 --log near.csv --guard-min-free 6GiB \
		$FX -- sleep 1.2 >near.out 2>near.err
	near=$(grep -c 'fdatasync(' near.st) # the log's; the status file's one atomic write is an fsync
	rows=$(($(wc -l <near.csv) - 1))
	RC=0
	# every sample's row (the start row comes before the first sample) and the end's
	[ "$near" -ge "$rows" ] && [ "$rows" -ge 5 ]
	_report $? "near the floor: every row fsync'd ($near syncs for $rows rows)"
	cp near.err "$ERR"
	expect_err "^log: [1-9][0-9]* rows? fsync'd at once" "the summary counts them"
	meminfo fx/proc/meminfo 96888422
	strace -f -o roomy.st -e trace=fsync,fdatasync $NONV "$S" run --interval 0.2 --log roomy.csv --guard-min-free 6GiB \
		$FX -- sleep 1.2 >roomy.out 2>roomy.err
	roomy=$(grep -c 'fdatasync(' roomy.st)
	rows=$(($(wc -l <roomy.csv) - 1))
	[ "$roomy" -le 1 ] && [ "$rows" -ge 5 ]
	_report $? "a roomy pool: only the end's fsync ($roomy syncs for $rows rows)"
	cp roomy.err "$ERR"
	expect_err "^log: 0 rows fsync'd at once \(pressure\), else every 60s" "the summary says none"
else
	skip_case "fsync per row near the floor" "strace is not installed (Debian package strace)"
	skip_case "no fsync per row when roomy" "strace is not installed (Debian package strace)"
fi
done_testing
