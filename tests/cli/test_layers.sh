#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/check-layers.sh: the real tree passes; a copy with an include going
# up a layer and a /proc path outside src/probe/ fails, naming file and line.
. "$(dirname "$0")/lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
CHECK="$top/scripts/check-layers.sh"

run sh "$CHECK" "$top"
expect_rc 0 "the real tree keeps its layers"

T="$TMP/tree"
mkdir -p "$T"
cp -R "$top/src" "$T/src"
run sh "$CHECK" "$T"
expect_rc 0 "a plain copy passes too"

# a probe reaching up into cmd/, and a command reading /proc itself
printf '#include "cmd/cli.h"\n' >>"$T/src/probe/meminfo.c"
bad_inc=$(wc -l <"$T/src/probe/meminfo.c" | tr -d ' ')
printf '// SPDX-License-Identifier: MIT\n/* a comment may say /proc/meminfo */\nstatic const char *p = "/proc/meminfo";\n' >"$T/src/cmd/x.c"
run sh "$CHECK" "$T"
expect_rc 1 "a planted bad include and /proc path fail"
expect_out "^src/probe/meminfo.c:$bad_inc: include \"cmd/cli.h\": probe \(rank 1\) -> cmd \(rank 5\) goes up" \
	"the bad include is named with its file:line and edge"
expect_out '^src/cmd/x.c:3: machine path "/proc/meminfo" outside src/probe/' "the /proc path is named with its file:line"
grep -q '^src/cmd/x.c:2:' "$OUT"
[ $? != 0 ]
_report $? "a comment naming /proc is not a finding"
expect_out '^check-layers: 2 findings' "the findings are counted"

done_testing
