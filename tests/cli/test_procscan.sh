#!/bin/sh
# SPDX-License-Identifier: MIT
# The process scan reads statm first (probe/procs.c): a process under 3 MiB
# resident gets no other read (no stat, comm, command line or cgroup); one at
# or above it, or whose statm cannot be read, is looked at in full. Kernel
# threads (kthreadd's children) get no read at all. On the fixtures it finds
# the same processes, with the same figures, command lines, caps and
# containers as the full scan did (the lists below are the full scan's
# output before statm came first), and the same verdicts.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
# every case runs under strace, and LeakSanitizer cannot run under ptrace
# (the ASan build aborts at exit): leaks are checked by the other suites
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
NOGPU="env SPARKOPS_NVML_LIB=/nonexistent/libnvidia-ml.so.1"
digest='[.processes[] | [.pid, .name, .kind, .rss_bytes, .cap_fraction, (.cmdline | length > 0), (.container != null)]]'

same_as_full() { # FIXTURE EXPECTED
	run $NOGPU $S status --json $(sysroot "$1")
	[ "$RC" = 0 ] && [ "$(jq -c "$digest" "$OUT")" = "$2" ]
	_report $? "$1: the processes, figures, command lines, caps and containers of the full scan"
}
same_as_full broken '[[77,"vllm","inference_server",0,0.9,true,false]]'
same_as_full containers '[[5101,"vllm","inference_server",32212254720,0.5,true,true],[5301,"sglang","inference_server",3221225472,0.3,true,true],[5401,"ollama","inference_server",536870912,null,true,false],[5201,"train_lora.py","trainer",6442450944,null,true,true],[5302,"torchtune","trainer",1073741824,null,true,true],[5501,"train.py","trainer",268435456,null,true,false]]'
same_as_full containers-v1 '[[6101,"ollama","inference_server",4294967296,null,true,true],[6201,"vllm","inference_server",2147483648,0.9,true,true]]'
same_as_full discrete '[[5000,"sglang","inference_server",6442450944,0.8,true,false],[5100,"java","other",13421772800,null,true,false]]'
same_as_full gb10-loaded '[[4000,"ollama","inference_server",9878421504,null,true,false],[2101,"vllm","inference_server",3328598016,0.5,true,false],[3301,"train.py","trainer",41339060224,null,true,false],[3300,"torchrun","trainer",644243456,null,true,false]]'
run $NOGPU $S status --json $(sysroot gb10-loaded)
expect_jq '.verdict == "2.2 GiB for a new job now, 46.8 GiB after a cache flush; PL1 at its cap (the platform'"'"'s sustained power limit)"' \
	"gb10-loaded: the full scan's verdict"

# --- a tree made here: 40 small processes, one big vllm, one small vllm ----------------
T="$TMP/tree"
cp -r "$FIX/gb10-idle" "$T"
rm -rf "$T/proc/812"
mk() { # PID COMM RESIDENT-PAGES CMDLINE...
	pid=$1 comm=$2 pages=$3
	shift 3
	mkdir -p "$T/proc/$pid"
	printf '%s\n' "$comm" >"$T/proc/$pid/comm"
	printf '%s 0 0 0 0 0 0\n' "$pages" | awk -v p="$pages" '{ $2 = p; print }' >"$T/proc/$pid/statm"
	printf '%s\0' "$@" >"$T/proc/$pid/cmdline"
	printf '0::/system.slice/app-%s.service\n' "$pid" >"$T/proc/$pid/cgroup"
}
i=0
while [ $i -lt 40 ]; do
	mk $((6000 + i)) bash 600 bash -c true # 2.3 MiB on 4 KiB pages
	i=$((i + 1))
done
mk 7000 python3 786432 python3 -m vllm.entrypoints.openai.api_server --gpu-memory-utilization 0.4 # 3 GiB
mk 7001 python3 512 python3 -m vllm.entrypoints.openai.api_server # 2 MiB: not a running server
run env SPARKOPS_PAGE_SIZE=4096 strace -f -qq -e trace=open,openat -o "$TMP/scan.trace" \
	$NOGPU $S status --json --procfs "$T/proc" --sysfs "$T/sys"
if [ "$RC" != 0 ] && ! command -v strace >/dev/null 2>&1; then
	skip_case "the statm-first scan under strace" "strace missing"
else
	expect_jq '[.processes[] | select(.pid == 7000)] | length == 1' "the big vllm is listed"
	expect_jq '.processes[] | select(.pid == 7000) | .name == "vllm" and .cap_fraction == 0.4 and (.cmdline | test("gpu-memory-utilization 0.4"))' \
		"the big process gets its full look: command line, name, cap"
	expect_jq '.processes[] | select(.pid == 7000) | .unit == "app-7000.service"' "and its cgroup (its systemd unit)"
	expect_jq '[.processes[] | select(.pid == 7001 or (.pid >= 6000 and .pid < 6040))] | length == 0' \
		"the processes under 3 MiB are not listed (the small vllm included)"
	small=$(grep -Ec '[/"]60[0-3][0-9]/(stat|comm|cmdline|cgroup)"' "$TMP/scan.trace")
	[ "$small" = 0 ]
	_report $? "a small process gets its statm read and nothing else ($small other opens)"
	statm=$(grep -Ec '"60[0-3][0-9]/statm"' "$TMP/scan.trace")
	[ "$statm" = 40 ]
	_report $? "every small process's statm is read once ($statm)"
	grep -Eq '"7000/cmdline"' "$TMP/scan.trace" && grep -Eq '/7000/cgroup"' "$TMP/scan.trace"
	_report $? "the big one's command line and cgroup are read"
fi

# --- kernel threads: kthreadd's children get no read -----------------------------------
K="$TMP/ktree"
cp -r "$T" "$K"
mkdir -p "$K/proc/2/task/2"
printf 'kthreadd\n' >"$K/proc/2/comm"
printf '0 0 0 0 0 0 0\n' >"$K/proc/2/statm"
# flags (field 9) with PF_KTHREAD (0x00200000 = 2097152) and PF_NOFREEZE
printf '2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 1 0 0 18446744073709551615\n' >"$K/proc/2/stat"
printf '6000 6001 6002 7000 ' >"$K/proc/2/task/2/children"
run env SPARKOPS_PAGE_SIZE=4096 strace -f -qq -e trace=open,openat -o "$TMP/k.trace" \
	$NOGPU $S status --json --procfs "$K/proc" --sysfs "$K/sys"
if command -v strace >/dev/null 2>&1; then
	n=$(grep -Ec '[/"](600[012]|7000)/' "$TMP/k.trace")
	[ "$n" = 0 ]
	_report $? "kthreadd's children get no read at all ($n opens)"
	expect_jq '[.processes[] | select(.pid == 7000)] | length == 0' "a pid kthreadd lists is a kernel thread: not listed"
	# a pid 2 without PF_KTHREAD (another pid namespace's second process) lists nothing
	printf '2 (kthreadd) S 0 0 0 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 1 0 0 18446744073709551615\n' >"$K/proc/2/stat"
	run env SPARKOPS_PAGE_SIZE=4096 $NOGPU $S status --json --procfs "$K/proc" --sysfs "$K/sys"
	expect_jq '[.processes[] | select(.pid == 7000)] | length == 1' "a pid 2 that is no kernel thread hides none of its children"
	# the live machine: none of kthreadd's children is read
	if grep -q '^2 (kthreadd)' /proc/2/stat 2>/dev/null; then
		run strace -f -qq -e trace=open,openat -o "$TMP/live.trace" $NOGPU $S status --json
		kids=$(tr ' ' '\n' </proc/2/task/2/children | grep -c .)
		hit=0
		for p in $(cat /proc/2/task/2/children); do
			grep -q "\"$p/statm\"" "$TMP/live.trace" && hit=$((hit + 1))
		done
		[ "$RC" = 0 ] && [ "$hit" = 0 ]
		_report $? "live: none of kthreadd's $kids children is read ($hit were)"
	else
		skip_case "live: kthreadd's children not read" "pid 2 is not kthreadd here (a pid namespace)"
	fi
else
	skip_case "kernel threads" "strace missing"
fi

# --- the live /proc at hundreds of processes: listed on every worker -------------------
# A scan of more than 512 tasks lists /proc on each of its threads (each takes
# the next getdents64 chunk and reads it while another lists), not all on the
# first; and it still finds the one big process among the small ones.
if ! command -v strace >/dev/null 2>&1; then
	skip_case "live: a big scan lists /proc on several threads" "strace missing"
elif [ "$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)" -lt 2 ]; then
	skip_case "live: a big scan lists /proc on several threads" "one CPU: the scan stays on one thread"
else
	SL=""
	need=$((700 - $(stat -c %h /proc)))
	i=0
	while [ $i -lt $need ]; do
		sleep 120 &
		SL="$SL $!"
		i=$((i + 1))
	done
	python3 -c 'import sys, time; b = b"x" * (48 << 20); sys.stdout.write("r\n"); sys.stdout.flush(); time.sleep(120)' >"$TMP/big.ready" &
	BIGP=$!
	j=0
	while ! grep -q r "$TMP/big.ready" 2>/dev/null && [ $j -lt 100 ]; do sleep 0.1; j=$((j + 1)); done
	run strace -f -qq -e trace=getdents64 -o "$TMP/par.trace" $NOGPU $S status --json --min-rss 32M
	# strace -f writes "PID getdents64(..." when a process has several threads
	listers=$(awk '$2 ~ /^getdents64\(/ { print $1 }' "$TMP/par.trace" | sort -u | wc -l)
	[ "$RC" = 0 ] && [ "$listers" -ge 2 ]
	_report $? "live: a scan of $(stat -c %h /proc) tasks lists /proc on $listers threads (at least 2)"
	expect_jq "[.processes[] | select(.pid == $BIGP)] | length == 1" "live: the big process is found among the small ones"
	kill $BIGP $SL 2>/dev/null
	wait 2>/dev/null
fi

done_testing
