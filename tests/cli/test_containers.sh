#!/bin/sh
# SPDX-License-Identifier: MIT
# Containers, pods and the memory nobody holds: the container of every listed
# process (Docker, Podman, containerd and CRI-O under Kubernetes, v1 and v2;
# systemd units on the host) in status, --json and the exposition; what each
# container holds; pool.unexplained_bytes on a tree built to hold a known
# amount, with its causes (orphaned /dev/shm files of the tree, never the
# machine's); a live cgroup made here where the machine allows it.
. "$(dirname "$0")/lib.sh"
SC="$(cd "$(dirname "$0")/../fake-nvml/scenarios" && pwd)"
S=$SPARKOPS
GIB=1073741824
VLLM=9a1b000000000000000000000000000000000000000000000000000000000001

# --- status: the CONTAINER column -----------------------------------------------------
run $S status $(sysroot containers)
expect_rc 0 "status on the containers tree"
expect_out '^ +PID +KIND +NAME +CONTAINER +RSS' "the process table has a CONTAINER column"
expect_out '^ +5101 .* vllm +vllm-qwen ' "Docker: named by the container's /etc/hostname"
expect_out '^ +5201 .* train_lora.py +7c2d00000000 ' "Podman: a hostname that is a link out of its root is not followed: the short id"
expect_out '^ +5301 .* sglang +ml/sglang-0 ' "Kubernetes: namespace/pod from the kubelet's log folder"
expect_out '^ +5302 .* torchtune +tune-job-x7k2p ' "Kubernetes: the pod's name from its hosts file"
expect_out '^ +5401 .* ollama +ollama.service ' "a systemd service on the host"
expect_out '^ +5501 .* session-3.scope ' "a user session on the host"

# --- --json: container per process ----------------------------------------------------
run $S status --json $(sysroot containers)
expect_rc 0 "status --json on the containers tree"
expect_jq '.processes[] | select(.pid == 5101) | .container | .runtime == "docker" and .id == "'$VLLM'" and .short_id == "9a1b00000000" and .name == "vllm-qwen" and .name_source == "hostname" and .pod == null and .unavailable.pod == "not_kubernetes"' \
	"json: the Docker container, its id and name"
expect_jq '.processes[] | select(.pid == 5201) | .container | .runtime == "podman" and .name_source == "short_id" and (.cgroup | endswith(".scope"))' \
	"json: Podman's container folder, not the nested one"
expect_jq '.processes[] | select(.pid == 5301) | .container | .runtime == "containerd" and .pod == "sglang-0" and .namespace == "ml" and .pod_uid == "0a1b2c3d-0000-4000-8000-00000000a001"' \
	"json: containerd under Kubernetes: pod, namespace, uid (the systemd driver's _ back to -)"
expect_jq '.processes[] | select(.pid == 5302) | .container | .runtime == "cri-o" and .pod == "tune-job-x7k2p" and .namespace == null and .unavailable.namespace == "not_in_kubelet_folders"' \
	"json: CRI-O: a namespace not known is null with the reason"
expect_jq '.processes[] | select(.pid == 5401) | .container == null and .unit == "ollama.service"' "json: on the host: container null, the unit named"
expect_jq '[.processes[] | has("container")] | all' "json: every process has the container key"

# --- what each container holds ----------------------------------------------------------
expect_jq '.containers | length == 4' "json: four containers"
expect_jq '.containers[] | select(.short_id == "9a1b00000000") | .memory_current_bytes == 31*'$GIB' and .memory_peak_bytes == 33*'$GIB' and .memory_limit_bytes == 32*'$GIB' and .page_cache_bytes == '$GIB' and .rss_bytes == 30*'$GIB' and .processes == 1' \
	"json: the Docker container's memory.current, peak, max, file and its process's RSS"
expect_jq '.containers[] | select(.short_id == "7c2d00000000") | .memory_limit_bytes == null and .memory_unavailable.memory_limit_bytes == "unlimited"' \
	"json: an unlimited container: null with the reason"
run env SPARKOPS_NVML_LIB="$FAKE_NVML" FAKE_NVML_SCENARIO="$SC/gb10.scn" FAKE_NVML_PROCS=5101:$((8 * GIB)),999999:$((4 * GIB)) \
	$S status $(sysroot containers)
expect_out '^CONTAINERS ' "a CONTAINERS section"
expect_out '^ +docker +vllm-qwen +31.0 GiB +33.0 GiB +32.0 GiB +1.0 GiB +30.0 GiB +8.0 GiB +38.0 GiB$' \
	"the container's row: memory, peak, limit, cache, RSS, GPU memory, its share of the pool"
expect_out "note: on unified memory a container's memory limit does not bound the GPU's allocations" \
	"on unified memory: the limit does not bound the GPU's allocations"
run $S status $(sysroot gb10-loaded)
expect_no_out '^CONTAINERS' "no containers: no section"

# cgroup v1: Docker's cgroupfs driver and the kubelet's
run $S status --json $(sysroot containers-v1)
expect_jq '.processes[] | select(.pid == 6101) | .container | .runtime == "docker" and .name == "ollama-box"' "v1: /docker/<id>"
expect_jq '.processes[] | select(.pid == 6201) | .container | .runtime == "kubernetes" and .pod_uid == "0a1b2c3d-0000-4000-8000-00000000a003" and .pod == null and .unavailable.pod == "missing"' \
	"v1: the kubelet's cgroupfs driver, no kubelet folder: pod null with the reason"
expect_jq '.containers[] | select(.short_id == "1d2e00000000") | .memory_current_bytes == 5*'$GIB' and .memory_peak_bytes == 6*'$GIB' and .memory_limit_bytes == null and .page_cache_bytes == '$GIB \
	"v1: usage_in_bytes, max_usage_in_bytes, an unlimited limit_in_bytes, cache"
expect_jq '.containers[] | select(.short_id == "2f3a00000000") | .memory_limit_bytes == 8*'$GIB "v1: the kubelet's limit"

# --- the memory nobody holds ------------------------------------------------------------
# the tree holds 100 GiB used, 40 GiB anonymous, 6 GiB shmem, 3.5 GiB kernel:
# 50.5 GiB that nobody holds, plus the /dev/shm files of the tree nobody maps
orphans=$(( $(stat -c '%b*%B' "$FIX/containers/dev/shm/nccl-abc123") + $(stat -c '%b*%B' "$FIX/containers/dev/shm/torch_4711_2204_0") ))
run $S status --json $(sysroot containers)
expect_jq '.unexplained | .used_bytes == 100*'$GIB' and .anonymous_bytes == 40*'$GIB' and .shmem_bytes == 6*'$GIB' and .kernel_bytes == 3584*1048576 and .gpu_bytes == 0' \
	"unexplained: its terms, exactly"
expect_jq '.pool.unexplained_bytes == 54223962112 + '$orphans' and .unexplained.shmem_orphaned_bytes == '$orphans \
	"pool.unexplained_bytes: 50.5 GiB + the orphaned /dev/shm files, to the byte"
expect_jq '[.unexplained.devshm.files[] | select(.holder_pid == null) | .name] == ["nccl-abc123", "torch_4711_2204_0"]' \
	"the /dev/shm files no process maps, largest first"
expect_jq '.unexplained.devshm.files[] | select(.name == "psm_mapped") | .holder_pid == 5101' "a /dev/shm file a process maps has its holder"
expect_jq '.unexplained.devshm.files_total == 3' "only the tree's /dev/shm is read"
run env SPARKOPS_NVML_LIB="$FAKE_NVML" FAKE_NVML_SCENARIO="$SC/gb10.scn" FAKE_NVML_PROCS=5101:$((8 * GIB)),999999:$((4 * GIB)) \
	$S status --json $(sysroot containers)
expect_jq '.pool.unexplained_bytes == 41339060224 + '$orphans' and .unexplained.driver_held_processes == 1 and .unexplained.driver_held_bytes == 4*'$GIB \
	"with NVML's per-process memory: 38.5 GiB, the pid /proc does not show counted as driver-held"
run env SPARKOPS_NVML_LIB="$FAKE_NVML" FAKE_NVML_SCENARIO="$SC/gb10.scn" FAKE_NVML_PROCS=5101:$((8 * GIB)),999999:$((4 * GIB)) \
	$S status $(sysroot containers)
expect_out '^  unexplained +38.5 GiB' "status: the unexplained row"
expect_out '^    1\. shmem 6.0 GiB in use; /dev/shm: 2 files no process maps or holds open' "cause 1: shmem and the orphaned /dev/shm files"
expect_out '^         nccl-abc123 ' "the orphans listed by name"
expect_out '^    2\. mlocked 256.0 MiB; hugetlb 2.0 GiB reserved' "cause 2: mlocked and hugetlb pages"
expect_out '^    3\. the GPU driver: NVML lists 1 process /proc does not show, holding 4.0 GiB' "cause 3: driver-held memory"
run env SPARKOPS_NVML_LIB="$FAKE_NVML" FAKE_NVML_SCENARIO="$SC/discrete.scn" FAKE_NVML_PROCS=5101:$((8 * GIB)) \
	$S status --json $(sysroot containers)
expect_jq '.pool.unexplained_bytes == 54223962112 + '$orphans' and .unexplained.gpu_in_pool == false and .unexplained.gpu_bytes == 0' \
	"a discrete GPU: its memory is not taken from the pool's"
run $S status $(sysroot gb10-loaded)
expect_no_out 'unexplained' "under the 4 GiB threshold: no row"
run $S status --json $(sysroot gb10-loaded)
expect_jq '.pool.unexplained_bytes < 4*'$GIB' and .unexplained.over_threshold == false and .unexplained.devshm.status == "not_scanned"' \
	"under the threshold: the figure, /dev/shm not scanned"
run $S status --json --no-processes $(sysroot containers)
expect_jq '.containers == null and .pool.unexplained_bytes == 54223962112 and .unexplained.devshm.status == "not_scanned"' \
	"--no-processes: containers null, the figure without the /dev/shm scan"
run $S status --no-processes $(sysroot containers)
expect_out '/dev/shm not scanned \(--no-processes\)' "--no-processes: the cause says /dev/shm was not scanned"
run $S status --json $(sysroot broken)
expect_jq '.pool.unexplained_bytes == null' "a garbled meminfo: null, never 0"

# --- a container's root is not trusted ----------------------------------------------------
# its hostname a FIFO: never opened (it would block), the short id instead
T3="$TMP/fifo"
cp -r "$FIX/containers" "$T3"
rm -f "$T3/proc/5101/root/etc/hostname"
mkfifo "$T3/proc/5101/root/etc/hostname"
run timeout 20 $S status --json --procfs "$T3/proc" --sysfs "$T3/sys"
expect_rc 0 "a FIFO for the container's hostname: status answers"
expect_jq '.processes[] | select(.pid == 5101) | .container | .name == "9a1b00000000" and .name_source == "short_id"' \
	"a FIFO for the container's hostname: the short id"
# its etc a link out of the root: not followed
rm -rf "$T3/proc/5101/root/etc"
mkdir -p "$T3/outside"
printf 'escaped\n' >"$T3/outside/hostname"
ln -s "$T3/outside" "$T3/proc/5101/root/etc"
run $S status --json --procfs "$T3/proc" --sysfs "$T3/sys"
expect_jq '.processes[] | select(.pid == 5101) | .container.name == "9a1b00000000"' "an etc that is a link: not followed"
# a hostname that is not a host name (escapes, spaces): not shown
rm -f "$T3/proc/5101/root/etc"
mkdir -p "$T3/proc/5101/root/etc"
printf 'evil\033[2Jname\n' >"$T3/proc/5101/root/etc/hostname"
run $S status --json --procfs "$T3/proc" --sysfs "$T3/sys"
expect_jq '.processes[] | select(.pid == 5101) | .container.name == "9a1b00000000"' "a hostname with control bytes: the short id"

# --- the exposition: per container, bounded ---------------------------------------------
for fx in containers containers-v1; do
	run $S metrics $(sysroot $fx)
	[ "$RC" = 0 ] && promtool check metrics <"$OUT" >"$ERR" 2>&1
	_report $? "promtool check metrics: $fx"
done
run $S metrics $(sysroot containers)
expect_out '^sparkops_container_memory_bytes\{runtime="docker",container="vllm-qwen",id="9a1b00000000",pod="",namespace=""\} 33285996544$' \
	"sparkops_container_memory_bytes for the Docker container"
expect_out '^sparkops_container_memory_bytes\{runtime="containerd",container="sglang-0",id="5e3f00000000",pod="sglang-0",namespace="ml"\} 4294967296$' \
	"the pod and namespace as labels"
expect_no_out '^sparkops_container_[a-z_]*\{[^}]*pid=' "never a pid label"
# twelve Docker containers: the largest eight and one 'other' row
T2="$TMP/many"
cp -r "$FIX/containers" "$T2"
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
	pid=$((7000 + i))
	id=$(printf 'ab%062d' "$i")
	mkdir -p "$T2/proc/$pid" "$T2/sys/fs/cgroup/system.slice/docker-$id.scope"
	printf 'python3\n' >"$T2/proc/$pid/comm"
	printf 'python3\0train_%s.py\0' "$i" >"$T2/proc/$pid/cmdline"
	printf '2000 1000 10 10 0 1000 0\n' >"$T2/proc/$pid/statm"
	printf '0::/system.slice/docker-%s.scope\n' "$id" >"$T2/proc/$pid/cgroup"
	printf '%d\n' $((i * 1048576)) >"$T2/sys/fs/cgroup/system.slice/docker-$id.scope/memory.current"
done
run $S metrics --procfs "$T2/proc" --sysfs "$T2/sys"
[ "$RC" = 0 ] && promtool check metrics <"$OUT" >"$ERR" 2>&1
_report $? "promtool check metrics: sixteen containers"
run $S metrics --procfs "$T2/proc" --sysfs "$T2/sys"
[ "$(grep -c '^sparkops_container_resident_bytes{' "$OUT")" = 9 ]
_report $? "at most 8 containers and an 'other' row a family"
expect_out '^sparkops_container_resident_bytes\{runtime="",container="other",id="",pod="",namespace=""\} ' "the 'other' row"
expect_out '^sparkops_containers\{state="seen"\} 16$' "sparkops_containers counts them all"

# --- live: a cgroup made here ---------------------------------------------------------------
live() {
	if [ "$(id -u)" != 0 ]; then
		skip_case "live cgroup" "not root"
		return
	fi
	if ! command -v unshare >/dev/null || ! command -v python3 >/dev/null; then
		skip_case "live cgroup" "unshare or python3 missing"
		return
	fi
	id=$(printf 'cd%062d' $$)
	if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
		top=/sys/fs/cgroup/sparkops-test-$$.slice
		dir=$top/docker-$id.scope
	elif [ -d /sys/fs/cgroup/memory ]; then
		top=/sys/fs/cgroup/memory/sparkops-test-$$
		dir=$top/docker/$id
	else
		skip_case "live cgroup" "no cgroup v2 or v1 memory hierarchy"
		return
	fi
	# v2: the memory controller for the folder below (memory.current there)
	if [ -f /sys/fs/cgroup/cgroup.controllers ] && mkdir -p "$top" 2>/dev/null; then
		echo +memory >"$top/cgroup.subtree_control" 2>/dev/null
	fi
	if ! mkdir -p "$dir" 2>/dev/null; then
		skip_case "live cgroup" "cannot make a cgroup under $(dirname "$top") (read-only or delegated elsewhere)"
		rmdir "$top" 2>/dev/null
		return
	fi
	printf 'import time\ntime.sleep(60)\n' >"$TMP/train_live.py"
	# the shell moves itself in, then starts python3 (which may be a
	# launcher that runs the interpreter as its child: it inherits the cgroup)
	sh -c 'echo $$ >"$1/cgroup.procs" || exit 9; exec python3 "$2"' sh "$dir" "$TMP/train_live.py" 2>/dev/null &
	sh_pid=$!
	n=0
	pid=
	while [ -z "$pid" ] && [ $n -lt 50 ]; do
		sleep 0.1
		n=$((n + 1))
		for p in $(cat "$dir/cgroup.procs" 2>/dev/null); do
			grep -q '^python' "/proc/$p/comm" 2>/dev/null &&
				tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q 'train_live.py' && pid=$p
		done
	done
	if [ -z "$pid" ]; then
		kill $(cat "$dir/cgroup.procs" 2>/dev/null) $sh_pid 2>/dev/null
		wait $sh_pid 2>/dev/null
		rmdir "$dir" "$(dirname "$dir")" "$top" 2>/dev/null
		skip_case "live cgroup" "cannot start a process in a cgroup made here"
		return
	fi
	has_mem=0
	[ -f "$dir/memory.current" ] || [ -f "$dir/memory.usage_in_bytes" ] && has_mem=1
	# a private /dev/shm: the machine's is never read
	run unshare -m sh -c 'mount -t tmpfs none /dev/shm && exec "$0" status --json' "$S"
	cp "$OUT" "$TMP/live.json"
	# the CSV log's start row names the job's container
	run $S watch --pid $pid --count 1 --interval 0.1 --log "$TMP/live.csv"
	grep -Eq ",event,start,interval=0.1 host=[^ ]+ pid=$pid container=[A-Za-z0-9._:@/-]+(,|\$)" "$TMP/live.csv"
	_report $? "live: watch --pid's start row names the job's container"
	cp "$TMP/live.json" "$OUT"
	kill $(cat "$dir/cgroup.procs" 2>/dev/null) $sh_pid 2>/dev/null
	wait $sh_pid 2>/dev/null
	# the folder empties once the killed process is gone for good
	n=0
	while [ -d "$top" ] && [ $n -lt 50 ]; do
		rmdir "$dir" 2>/dev/null
		[ -d "$top/docker" ] && rmdir "$top/docker" 2>/dev/null
		rmdir "$top" 2>/dev/null || sleep 0.1
		n=$((n + 1))
	done
	expect_jq '.processes[] | select(.pid == '$pid') | .container | .runtime == "docker" and .id == "'$id'"' \
		"live: a process in a cgroup made here is in its container"
	if [ "$has_mem" = 1 ]; then
		expect_jq '.containers[] | select(.id == "'$id'") | .memory_current_bytes > 0' "live: the container's memory read"
	else
		skip_case "live: the container's memory read" "no memory controller in the cgroup made here"
	fi
	[ ! -d "$top" ]
	_report $? "live: the cgroup made is removed"
}
live
done_testing
