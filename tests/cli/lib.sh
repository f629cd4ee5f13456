# SPDX-License-Identifier: MIT
# Helpers for the CLI tests: each case runs the built binary and checks its
# exit code and output. Prints TAP "ok N - name" / "not ok N - name" and the
# plan "1..N" at the end (done_testing), so prove(1) runs the scripts.
# A script runs alone with `sh tests/cli/test_X.sh`: what scripts/run-tests.sh
# sets is found here when unset (the build in build/, or $BUILD).
_top=$(cd "$(dirname "$0")/../.." && pwd)
: "${BUILD_DIR:=$_top/${BUILD:-build}}"
: "${SPARKOPS:=$BUILD_DIR/sparkops}"
: "${FAKE_NVML:=$BUILD_DIR/libfake-nvml.so}"
: "${FAKE_NVML_OLD:=$BUILD_DIR/libfake-nvml-old.so}"
: "${FIX:=$_top/tests/fixtures}"
: "${NO_COLOR:=1}"
export BUILD_DIR SPARKOPS FAKE_NVML FAKE_NVML_OLD FIX NO_COLOR
# the developer's own roots and libraries stay out of the tests
unset SPARKOPS_PROCFS SPARKOPS_SYSFS SPARKOPS_NVML_LIB FAKE_NVML_SCENARIO SPARKOPS_PAGE_SIZE SPARKOPS_NO_GPU_THREAD
if [ ! -x "$SPARKOPS" ]; then
	echo "Bail out! no $SPARKOPS: build it first (make test-bins, or set SPARKOPS / BUILD)"
	exit 2
fi
T_N=0
T_FAILED=0
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# sealed from the machine: every file sparkops keeps of its own (the job
# status files top reads, the ladder's state) goes under this script's $TMP,
# never /run/sparkops or ~/.local/state (SPARKOPS_RUN_DIR: util/paths.h)
SPARKOPS_RUN_DIR="$TMP/sparkops-root"
XDG_RUNTIME_DIR="$TMP/xdg-runtime"
mkdir -m 0700 "$XDG_RUNTIME_DIR"
export SPARKOPS_RUN_DIR XDG_RUNTIME_DIR
# the driver a case runs against: none (NODRV), the fake NVML as a GB10
# (GB10) or as a discrete card (DISC); SC the fake's scenarios
SC="$(cd "$(dirname "$0")/../fake-nvml/scenarios" && pwd)"
NODRV="env SPARKOPS_NVML_LIB=/nonexistent/libnvidia-ml.so.1"
GB10="env SPARKOPS_NVML_LIB=$FAKE_NVML FAKE_NVML_SCENARIO=$SC/gb10.scn"
DISC="env SPARKOPS_NVML_LIB=$FAKE_NVML FAKE_NVML_SCENARIO=$SC/discrete.scn"
OUT="$TMP/out"
ERR="$TMP/err"
: >"$OUT"
: >"$ERR"

# run CMD... : runs it, keeps stdout in $OUT, stderr in $ERR, exit code in $RC
run() {
	"$@" >"$OUT" 2>"$ERR"
	RC=$?
}

# read_in FILE... : reads each file into the page cache, again until fincore
# (util-linux) says 90% of it is resident, at most 5 reads (memory pressure
# or the kernel's DAMON reclaim can take the pages of a file just read); one
# read where fincore is missing
read_in() {
	for _f in "$@"; do
		_i=0
		while :; do
			cat "$_f" >/dev/null
			_i=$((_i + 1))
			command -v fincore >/dev/null || break
			_r=$(fincore -b -n -o RES "$_f" 2>/dev/null | awk '{ print $1 }')
			[ "${_r:-0}" -lt $(($(stat -c %s "$_f") * 9 / 10)) ] && [ $_i -lt 5 ] || break
		done
	done
}

# sysroot NAME : the args that point the roots at a fixture tree
sysroot() {
	echo "--procfs $FIX/$1/proc --sysfs $FIX/$1/sys"
}

_report() { # ok? name
	T_N=$((T_N + 1))
	# under qemu (scripts/check-arm64.sh) a command that would start a thread
	# is not run: the case is a TAP skip with the wrapper's reason
	if [ -n "$SPARKOPS_UNDER_QEMU" ] && grep -q '^sparkops-qemu: skipped: ' "$ERR" 2>/dev/null; then
		echo "ok $T_N - $2 # SKIP $(sed -n 's/^sparkops-qemu: skipped: //p' "$ERR" | head -1)"
		return
	fi
	if [ "$1" = 0 ]; then
		echo "ok $T_N - $2"
	else
		T_FAILED=$((T_FAILED + 1))
		echo "not ok $T_N - $2"
		echo "# rc=$RC"
		sed 's/^/# out: /' "$OUT" | head -40
		sed 's/^/# err: /' "$ERR" | head -20
	fi
}

# skip_case name reason : a TAP skip, counted and shown, never silent
skip_case() {
	T_N=$((T_N + 1))
	echo "ok $T_N - $1 # SKIP $2"
}
expect_rc() { # want name
	[ "$RC" = "$1" ]
	_report $? "$2 (exit $1)"
}
expect_out() { # grep-E-pattern name
	grep -Eq -- "$1" "$OUT"
	_report $? "$2"
}
expect_no_out() {
	! grep -Eq -- "$1" "$OUT"
	_report $? "$2"
}
expect_err() {
	grep -Eq -- "$1" "$ERR"
	_report $? "$2"
}
# expect_jq 'jq boolean expression' name : evaluated on $OUT
expect_jq() {
	jq -e "$1" "$OUT" >/dev/null 2>&1
	_report $? "$2"
}
done_testing() {
	echo "1..$T_N"
	[ "$T_FAILED" -eq 0 ]
}
