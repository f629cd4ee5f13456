#!/bin/sh
# SPDX-License-Identifier: MIT
# prove(1)'s --exec for the suite (scripts/run-tests.sh): runs one test file
# (a CLI script with sh, a cmocka unit binary with its TAP output) and hands
# its stdout, the TAP, to prove. With SPARKOPS_TEST_LOGS set, stdout, stderr
# and the exit code are also kept there for the summary.
t=$1
unit=
case $t in
*.sh) set -- sh "$t" ;;
*) CMOCKA_MESSAGE_OUTPUT=TAP; export CMOCKA_MESSAGE_OUTPUT; set -- "$t"; unit=1 ;;
esac
name=$(basename "$t")
# one of the scripts that must not run beside each other (run-tests.sh:
# SPARKOPS_TEST_SERIAL): under the lock, which flock holds (-o: not the script's children)
case " $SPARKOPS_TEST_SERIAL " in
*" $name "*) [ -n "$SPARKOPS_TEST_LOCK" ] && command -v flock >/dev/null && set -- flock -o "$SPARKOPS_TEST_LOCK" "$@" ;;
esac
if [ -n "$SPARKOPS_TEST_LOGS" ]; then
	log="$SPARKOPS_TEST_LOGS/$name"
	errto="$log.err"
else
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	log="$tmp/$name"
	errto=/dev/stderr
fi
"$@" >"$log.out" 2>"$errto"
rc=$?
echo "$rc" >"$log.rc"
# cmocka 1.1 writes a skipped case as "not ok N # SKIP": TAP's skip is "ok"
if [ -n "$unit" ]; then
	sed 's/^not ok \([0-9][0-9]*\) # SKIP/ok \1 # SKIP/' "$log.out" >"$log.tap" && mv "$log.tap" "$log.out"
fi
cat "$log.out"
exit "$rc"
