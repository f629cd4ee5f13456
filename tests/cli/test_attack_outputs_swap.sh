#!/bin/sh
# SPDX-License-Identifier: MIT
# The output attack matrix (test_attack_outputs.sh), its swapparent attack:
# the folder of a long output (run, watch, metrics --interval) is replaced by
# nobody's link to a root-only folder mid-run; nothing is written there. A
# file of its own (each case runs for seconds), its cases run concurrently.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/attack_lib.sh"

attack_matrix swapparent
long=$(awk '$1 == "run" || $1 == "watch" || $1 == "metrics"' "$TMP/matrix" | wc -l | tr -d ' ')
[ "$ran" -ge 1 ] && [ "$ran" = "$long" ]
_report $? "swapparent: every long output option ($ran of $long cases)"
done_testing
