#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/check-layers.sh: a folder's private header (engine/engine_int.h,
# model/model_int.h, probe/nvml_internal.h) is included by its own folder's
# files only. The real tree passes; a copy where a command reaches into the
# engine's insides, even down the layers, fails naming file and line.
. "$(dirname "$0")/lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
CHECK="$top/scripts/check-layers.sh"

run sh "$CHECK" "$top"
expect_rc 0 "the real tree includes no folder's private header from outside it"

T="$TMP/tree"
mkdir -p "$T"
cp -R "$top/src" "$T/src"
# cmd (rank 5) may include engine/ (rank 4) headers, but not its insides
printf '#include "engine/engine_int.h"\n' >>"$T/src/cmd/run.c"
l1=$(wc -l <"$T/src/cmd/run.c" | tr -d ' ')
printf '#include "probe/nvml_internal.h"\n' >>"$T/src/watch/guard.c"
l2=$(wc -l <"$T/src/watch/guard.c" | tr -d ' ')
# the folder's own files may
printf '#include "engine/engine_int.h"\n' >>"$T/src/engine/retry.c"
run sh "$CHECK" "$T"
expect_rc 1 "a private header included from another folder fails"
expect_out "^src/cmd/run.c:$l1: include \"engine/engine_int.h\": the private header of engine/, from cmd" \
	"the engine's insides from cmd/ are named with file:line"
expect_out "^src/watch/guard.c:$l2: include \"probe/nvml_internal.h\": the private header of probe/, from watch" \
	"an _internal.h header too"
! grep -q '^src/engine/retry.c:' "$OUT"
_report $? "the engine's own file including it is not a finding"
expect_out '^check-layers: 2 findings' "the findings are counted"

done_testing
