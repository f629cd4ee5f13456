#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/check-writes.sh (make layers, part of make check): the real tree
# opens files for writing only through the one door (src/util/fileio.c); a
# copy with a stray writer planted fails, naming file and line; reads,
# comments and the allow-listed kernel-file writers in src/probe/ do not.
. "$(dirname "$0")/lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
CHECK="$top/scripts/check-writes.sh"

run sh "$CHECK" "$top"
expect_rc 0 "the real tree writes only through the door"

fresh() {
	rm -rf "$TMP/tree"
	mkdir -p "$TMP/tree"
	cp -R "$top/src" "$TMP/tree/src"
	T="$TMP/tree"
}
fresh
run sh "$CHECK" "$T"
expect_rc 0 "a plain copy passes too"

# a stray open for writing in a command
printf 'static int stray(const char *p)\n{\n\treturn open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);\n}\n' >>"$T/src/cmd/report.c"
ln=$(($(wc -l <"$T/src/cmd/report.c") - 1))
run sh "$CHECK" "$T"
expect_rc 1 "a planted open(O_WRONLY|O_CREAT) fails the check"
expect_out "^src/cmd/report.c:$ln: open\(\) for writing outside src/util/fileio.c" "it is named with FILE:LINE"

# the flags on the next line; fopen "a"; creat; openat O_RDWR in a probe not on the list
fresh
printf 'static int s2(const char *p)\n{\n\tint fd = open(p,\n\t\t      O_APPEND | O_CLOEXEC);\n\treturn fd;\n}\n' >>"$T/src/watch/sampler.c"
l2=$(($(wc -l <"$T/src/watch/sampler.c") - 3))
printf 'static void s3(const char *p)\n{\n\tFILE *f = fopen(p, "ae");\n\tif (f)\n\t\tfclose(f);\n}\n' >>"$T/src/out/svg.c"
l3=$(($(wc -l <"$T/src/out/svg.c") - 3))
printf 'static int s4(const char *p)\n{\n\treturn creat(p, 0600);\n}\n' >>"$T/src/engine/retry.c"
l4=$(($(wc -l <"$T/src/engine/retry.c") - 1))
printf 'static int s5(int d)\n{\n\treturn openat(d, "x", O_RDWR);\n}\n' >>"$T/src/probe/meminfo.c"
l5=$(($(wc -l <"$T/src/probe/meminfo.c") - 1))
run sh "$CHECK" "$T"
expect_rc 1 "four planted writers fail the check"
expect_out "^src/watch/sampler.c:$l2: open\(\) for writing" "an open whose flags are on the next line"
expect_out "^src/out/svg.c:$l3: fopen\(\"ae\"\)" "fopen in append mode"
expect_out "^src/engine/retry.c:$l4: creat\(\)" "creat"
expect_out "^src/probe/meminfo.c:$l5: openat\(\) for writing" "a probe function not on the allow-list"
expect_out "^check-writes: 4 findings" "the findings are counted"

# not findings: reads, a comment, a string that mentions O_WRONLY
fresh
printf 'static int r1(const char *p)\n{\n\t/* open(p, O_WRONLY) would be wrong here */\n\tFILE *f = fopen(p, "re");\n\tif (f)\n\t\tfclose(f);\n\tputs("open(x, O_WRONLY)");\n\treturn open(p, O_RDONLY | O_CLOEXEC);\n}\n' >>"$T/src/cmd/plan.c"
run sh "$CHECK" "$T"
expect_rc 0 "reads, comments and prose are not findings"

# the allow-list stays true: an entry whose write is gone is a finding
fresh
sed 's/sp_open_proc(path, O_WRONLY)/sp_open_proc(path, O_RDONLY)/' "$T/src/probe/harden.c" >"$T/h.c" && mv "$T/h.c" "$T/src/probe/harden.c"
run sh "$CHECK" "$T"
expect_rc 1 "an allow-list entry that matches no write fails"
expect_out 'allow-list entry "src/probe/harden.c lower_own_oom_score" matches no write' "and is named"

# write flags kept in a variable for a later open are a finding too
fresh
printf 'static int w2(const char *p)\n{\n\tint fl = O_WRONLY | O_CREAT;\n\treturn open(p, fl, 0644);\n}\n' >>"$T/src/cmd/plan.c"
run sh "$CHECK" "$T"
expect_rc 1 "write flags in a variable fail"
expect_out 'src/cmd/plan.c:[0-9]+: open flags for writing kept for a later open' "with FILE:LINE"

done_testing
