#!/bin/sh
# SPDX-License-Identifier: MIT
# The platform's fingerprint in status (human and --json) and the
# exposition: kernel, NVIDIA driver, CUDA driver version, DGX OS, BIOS,
# board from the GB10 fixture trees (proc/, sys/ and the etc/ beside them)
# and the fake NVML; unknown is null with a reason, never "" or 0; the
# known-bad table's warnings; promtool-clean.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
SCN=$(dirname "$0")/../fake-nvml/scenarios
# tree NAME: a copy of a fixture tree to edit
tree() {
	rm -rf "$TMP/$1"
	cp -r "$FIX/$1" "$TMP/$1"
	echo "$TMP/$1"
}
roots() { echo "--procfs $1/proc --sysfs $1/sys"; }

# ---- the GB10 tree, no NVML ------------------------------------------------------------
run "$S" $(sysroot gb10-healthy) status --json --no-processes
expect_jq '.platform.kernel == "6.17.0-1032-nvidia" and .platform.sources.kernel == "/proc/version"' "kernel from /proc/version"
expect_jq '.platform.driver == "580.173.02" and .platform.sources.driver == "/proc/driver/nvidia/version"' "driver from the loaded module"
expect_jq '.platform.dgx_os == "7.5.0"' "DGX OS: the last OTA's version, not the first build's"
expect_jq '.platform.os == "Ubuntu 24.04.3 LTS"' "the distribution from os-release"
expect_jq '.platform.bios == "5.36_0ACUM023" and .platform.board == "P4242" and .platform.product == "NVIDIA DGX Spark"' "BIOS, board and product from DMI"
expect_jq '.platform.cuda == null and .platform.unavailable.cuda == "no_driver"' "CUDA without NVML: null, with the reason"
expect_jq '.platform.known_bad == []' "nothing known bad"
expect_jq '[.platform | to_entries[] | select(.key != "sources" and .key != "unavailable" and .key != "known_bad") | .value] | all(. == null or (type == "string" and length > 0))' "every field a non-empty string or null"
run "$S" $(sysroot gb10-healthy) status --no-processes
expect_out '^PLATFORM' "human: a PLATFORM section"
expect_out '^  kernel +6\.17\.0-1032-nvidia  \(/proc/version\)' "human: the kernel and its source"
expect_out '^  CUDA +unknown \(' "human: unknown says why"

# ---- known-bad versions --------------------------------------------------------------------
base_rc=$RC
T=$(tree gb10-healthy)
sed -i 's/6\.17\.0-1032-nvidia/6.17.0-1008-nvidia/' "$T/proc/version"
run "$S" $(roots "$T") status --json --no-processes
expect_jq '.platform.known_bad | length == 1 and .[0].field == "kernel" and .[0].version == "6.17.0-1008"' "6.17.0-1008 is known bad"
expect_jq '.platform.known_bad[0].source | test("^https://")' "the warning names its public source"
expect_jq '.verdict | test("known-bad kernel 6.17.0-1008")' "the verdict mentions it"
run "$S" $(roots "$T") status --no-processes
expect_out 'warning: kernel 6\.17\.0-1008 .*panics' "human: the warning"
[ "$RC" = "$base_rc" ]
_report $? "a known-bad version is a warning: the exit code is unchanged"
sed -i 's/6\.17\.0-1008-nvidia/7.0.0-1019-nvidia/' "$T/proc/version"
run "$S" $(roots "$T") status --json --no-processes
expect_jq '.platform.known_bad[0].version == "7.0.0-1019" and (.platform.known_bad[0].warning | test("CmaTotal"))' "7.0.0-1019 is known bad (CmaTotal, RDMA)"
sed -i 's/7\.0\.0-1019-nvidia/6.17.0-10080-nvidia/' "$T/proc/version"
run "$S" $(roots "$T") status --json --no-processes
expect_jq '.platform.known_bad == []' "6.17.0-10080 is not 6.17.0-1008"

# ---- what is missing or a placeholder -------------------------------------------------------
rm -f "$T/proc/version"
printf 'To be filled by O.E.M.\n' >"$T/sys/class/dmi/id/board_name"
rm -f "$T/etc/dgx-release"
run "$S" $(roots "$T") status --json --no-processes
expect_jq '.platform.kernel == "6.17.0-1032-nvidia" and .platform.sources.kernel == "/proc/sys/kernel/osrelease"' "kernel from osrelease when /proc/version is missing"
expect_jq '.platform.board == null and .platform.unavailable.board == "malformed"' "a DMI placeholder is no board"
expect_jq '.platform.dgx_os == null and .platform.unavailable.dgx_os == "missing"' "no dgx-release: not DGX OS"
mkdir -p "$TMP/etc2"
printf 'DGX_SWBUILD_VERSION="7.2.3"\n' >"$TMP/etc2/dgx-release"
SPARKOPS_ETC=$TMP/etc2 run "$S" $(roots "$T") status --json --no-processes
expect_jq '.platform.dgx_os == "7.2.3" and .platform.os == null' "SPARKOPS_ETC names the etc root"

# ---- NVML: the driver and CUDA versions ------------------------------------------------------
cp "$SCN/gb10.scn" "$TMP/a.scn"
printf 'cuda_version - 12090\n' >>"$TMP/a.scn"
SPARKOPS_NVML_LIB=$FAKE_NVML FAKE_NVML_SCENARIO=$TMP/a.scn run "$S" $(sysroot no-gpu) status --json --no-processes
expect_jq '.platform.driver == "580.95.05" and .platform.sources.driver == "NVML"' "driver from NVML when the module says nothing"
expect_jq '.platform.cuda == "12.9" and .platform.sources.cuda == "NVML"' "CUDA 12090 is 12.9"
cp "$SCN/gb10.scn" "$TMP/b.scn"
printf 'driver_version - 590.44.01\n' >>"$TMP/b.scn"
SPARKOPS_NVML_LIB=$FAKE_NVML FAKE_NVML_SCENARIO=$TMP/b.scn run "$S" $(sysroot no-gpu) status --json --no-processes
expect_jq '.platform.driver == "590.44.01" and .platform.known_bad[0].field == "driver"' "driver 590 is known bad"
cp "$SCN/gb10.scn" "$TMP/c.scn"
printf 'driver_version - NOT_SUPPORTED\ncuda_version - 7\n' >>"$TMP/c.scn"
SPARKOPS_NVML_LIB=$FAKE_NVML FAKE_NVML_SCENARIO=$TMP/c.scn run "$S" $(sysroot no-gpu) status --json --no-processes
expect_jq '.platform.driver == null and .platform.unavailable.driver == "not_supported"' "NVML without the driver's version: null, not_supported"
expect_jq '.platform.cuda == null and .platform.unavailable.cuda == "implausible"' "a CUDA version of 7 is implausible"
: >"$TMP/calls"
SPARKOPS_NVML_LIB=$FAKE_NVML_OLD FAKE_NVML_SCENARIO=$SCN/gb10.scn FAKE_NVML_CALL_LOG=$TMP/calls run "$S" $(sysroot no-gpu) status --json --no-processes
expect_jq '.platform.cuda == "13.0"' "an old driver: CUDA through the unversioned name"
grep -qx nvmlSystemGetCudaDriverVersion "$TMP/calls"
_report $? "an old driver: nvmlSystemGetCudaDriverVersion was the call"

# ---- the exposition ---------------------------------------------------------------------
run "$S" $(sysroot gb10-healthy) metrics --no-processes
expect_out '^sparkops_platform_info\{kernel="6\.17\.0-1032-nvidia",driver="580\.173\.02",dgx_os="7\.5\.0",bios="5\.36_0ACUM023",board="P4242"\} 1$' "sparkops_platform_info: the known fields, CUDA left out"
expect_no_out '^sparkops_platform_known_bad' "no known-bad series when nothing matches"
if command -v promtool >/dev/null 2>&1; then
	promtool check metrics <"$OUT" >"$ERR" 2>&1
	_report $? "promtool check metrics: the GB10 tree"
	T=$(tree gb10-healthy)
	sed -i 's/6\.17\.0-1032-nvidia/6.17.0-1008-nvidia/' "$T/proc/version"
	run "$S" $(roots "$T") metrics --no-processes
	expect_out '^sparkops_platform_known_bad\{field="kernel",version="6\.17\.0-1008"\} 1$' "sparkops_platform_known_bad for 6.17.0-1008"
	promtool check metrics <"$OUT" >"$ERR" 2>&1
	_report $? "promtool check metrics: a known-bad kernel"
	SPARKOPS_NVML_LIB=$FAKE_NVML FAKE_NVML_SCENARIO=$TMP/a.scn run "$S" $(sysroot no-gpu) metrics --no-processes
	expect_out '^sparkops_platform_info\{driver="580\.95\.05",cuda="12\.9"\} 1$' "the exposition: NVML's driver and CUDA"
	promtool check metrics <"$OUT" >"$ERR" 2>&1
	_report $? "promtool check metrics: NVML's versions"
	run "$S" $(sysroot missing) metrics --no-processes
	promtool check metrics <"$OUT" >"$ERR" 2>&1
	_report $? "promtool check metrics: nothing known (no labels)"
else
	skip_case "promtool check metrics" "promtool is not installed (Debian package prometheus)"
fi
done_testing
