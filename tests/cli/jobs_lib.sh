# SPDX-License-Identifier: MIT
# Helpers for the tests that start run/watch jobs and signal or watch them
# (sourced after lib.sh; test_gpu_slow_driver, test_guard_ancestor,
# test_ladder_watchers, test_run_signals). The script runs in its $TMP.
# these cases flush into a fixture tree of our own: the test switch (docs/RELIABILITY.md)
export SPARKOPS_TEST_PROCFS_WRITES=1
S=$SPARKOPS
NONV="env SPARKOPS_NVML_LIB=/nonexistent/libnvidia-ml.so.1"
SC="$(cd "$(dirname "$0")/../fake-nvml/scenarios" && pwd)"
IDLE="--procfs $FIX/gb10-idle/proc --sysfs $FIX/gb10-idle/sys"
cd "$TMP" || exit 2

# wait_for CMD... : up to 5 s for CMD to succeed
wait_for() {
	i=0
	while ! "$@" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	"$@" 2>/dev/null
}
# gone PID : true when PID has ended (or is a zombie nobody waits for)
gone() {
	[ ! -e "/proc/$1" ] || grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null
}
