#!/bin/sh
# SPDX-License-Identifier: MIT
# valgrind memcheck over a list of sparkops command lines (fixture trees and
# the fake NVML, so it runs anywhere). A line whose command does not exist
# yet (`sparkops CMD --help` fails) is skipped and said so; any memcheck
# error or definite/indirect leak fails. Usage: scripts/valgrind-check.sh [BUILD]
BUILD=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
S="$top/$BUILD/sparkops"
FIX="$top/tests/fixtures"
SC="$top/tests/fake-nvml/scenarios"
export SPARKOPS_NVML_LIB="$top/$BUILD/libfake-nvml.so"
export NO_COLOR=1
LOADED="--procfs $FIX/gb10-loaded/proc --sysfs $FIX/gb10-loaded/sys"
TMPD=$(mktemp -d)
trap 'rm -rf "$TMPD"' EXIT
# sealed from the machine, like the suites (tests/cli/lib.sh): the status
# files, the ladder's state and run's default log go under $TMPD, never
# /run/sparkops, ~/.local/state or the repository
export SPARKOPS_RUN_DIR="$TMPD/run" XDG_STATE_HOME="$TMPD/state" XDG_RUNTIME_DIR="$TMPD/xdg"
mkdir -m 0700 "$XDG_RUNTIME_DIR"

if ! command -v valgrind >/dev/null 2>&1; then
	echo "valgrind: not installed (make deps-check installs it)" >&2
	exit 1
fi

# one command line per line: the subcommand first (checked for existence);
# a leading @NAME runs it under fake-NVML scenario NAME instead of gb10
cat >"$TMPD/cmds" <<CMDS
status $LOADED
@hang status $LOADED --json --gpu-timeout 300ms
@lost-midrun status $LOADED --json
@garbage status $LOADED
status $LOADED --json
status --procfs $FIX/broken/proc --sysfs $FIX/broken/sys --json
status --procfs $FIX/container-v2/proc --sysfs $FIX/container-v2/sys --json
status --procfs $FIX/containers/proc --sysfs $FIX/containers/sys
metrics --procfs $FIX/containers-v1/proc --sysfs $FIX/containers-v1/sys
plan llama-3.1-8b --method lora
plan llama-3.1-8b --method qlora --json
ladder $LOADED --json
run --interval 1 $LOADED -- sleep 2
watch --interval 1 --count 2 $LOADED
metrics $LOADED
metrics $LOADED --kmsg $FIX/kmsg/wedge.kmsg
CMDS
# postmortem reads a journal made from its export-format fixture (when
# systemd-journal-remote is there, as make deps-check installs it)
for r in /lib/systemd/systemd-journal-remote /usr/lib/systemd/systemd-journal-remote; do
	if [ -x "$r" ] && "$r" -o "$TMPD/wedge.journal" - <"$FIX/journal/wedge-run.export" 2>/dev/null; then
		echo "postmortem --journal $TMPD/wedge.journal --log $FIX/journal/wedge-run.csv --pstore $FIX/journal/pstore-panic --json" >>"$TMPD/cmds"
		break
	fi
done

fail=0
n=0
skipped=""
cd "$TMPD" || exit 2 # run writes its default log to the working folder
while read -r cmd args; do
	[ -n "$cmd" ] || continue
	scn=gb10
	case "$cmd" in
	@*)
		scn=${cmd#@}
		cmd=${args%% *}
		args=${args#* }
		;;
	esac
	if ! "$S" "$cmd" --help >/dev/null 2>&1; then
		skipped="$skipped $cmd"
		continue
	fi
	n=$((n + 1))
	log="$TMPD/vg.$n"
	# shellcheck disable=SC2086  # args are split on purpose
	FAKE_NVML_SCENARIO="$SC/$scn.scn" valgrind --quiet --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect \
		--errors-for-leak-kinds=definite,indirect --track-fds=no \
		"$S" "$cmd" $args >/dev/null 2>"$log"
	rc=$?
	if [ $rc = 99 ] || grep -q '^==[0-9]*== ' "$log"; then
		echo "valgrind: sparkops $cmd $args: memcheck errors" >&2
		cat "$log" >&2
		fail=1
	else
		echo "valgrind: sparkops $cmd ($scn) clean (exit $rc)"
	fi
done <"$TMPD/cmds"
[ -n "$skipped" ] && echo "valgrind: skipped (command not there yet):$(echo "$skipped" | tr ' ' '\n' | sort -u | tr '\n' ' ')"
exit $fail
