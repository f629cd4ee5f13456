#!/bin/sh
# SPDX-License-Identifier: MIT
# The example outputs pasted in README.md and docs/*.md are what the binary
# prints now (scripts/docs-examples.py; `make docs-examples` rewrites them),
# and the checker itself notices a stale block and an unknown marker.
. "$(dirname "$0")/lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
B=$(dirname "$SPARKOPS")
if ! command -v python3 >/dev/null 2>&1; then
	skip_case "pasted examples are current" "python3 is not installed"
	done_testing
	exit $?
fi
run python3 "$top/scripts/docs-examples.py" "$B" check "$top/README.md" "$top"/docs/*.md
expect_rc 0 "every pasted example is what the binary prints now"
expect_out '^docs-examples: [1-9][0-9]* examples' "the README has generated examples"

# the checker checks: a stale copy fails with a diff, an unknown marker fails
sed 's/^  free             6.2 GiB/  free             9.9 GiB/' "$top/README.md" >"$TMP/README.md"
run python3 "$top/scripts/docs-examples.py" "$B" check "$TMP/README.md"
expect_rc 1 "a stale example fails"
expect_out "example 'status' differs" "the stale example is named"
expect_out '^-  free             9.9 GiB' "with a diff"
printf '<!-- example: nosuch -->\n```\n$ x\n```\n' >"$TMP/bad.md"
run python3 "$top/scripts/docs-examples.py" "$B" check "$TMP/bad.md"
expect_rc 1 "an unknown example name fails"
cp "$TMP/README.md" "$TMP/fix.md"
run python3 "$top/scripts/docs-examples.py" "$B" write "$TMP/fix.md"
run python3 "$top/scripts/docs-examples.py" "$B" check "$TMP/fix.md"
expect_rc 0 "write makes the stale copy current"
done_testing
