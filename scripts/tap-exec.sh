#!/bin/sh
# SPDX-License-Identifier: MIT
# prove(1)'s --exec for the suite (scripts/run-tests.sh): runs one test file
# (a CLI script with sh, a cmocka unit binary with its TAP output) and hands
# its stdout, the TAP, to prove. With SPARKOPS_TEST_LOGS set, stdout, stderr
# and the exit code are also kept there for the summary.
t=$1
case $t in
*.sh) set -- sh "$t" ;;
*) CMOCKA_MESSAGE_OUTPUT=TAP; export CMOCKA_MESSAGE_OUTPUT; set -- "$t" ;;
esac
if [ -z "$SPARKOPS_TEST_LOGS" ]; then
	exec "$@"
fi
name=$(basename "$t")
log="$SPARKOPS_TEST_LOGS/$name"
"$@" >"$log.out" 2>"$log.err"
rc=$?
echo "$rc" >"$log.rc"
cat "$log.out"
exit "$rc"
