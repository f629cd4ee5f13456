#!/bin/sh
# SPDX-License-Identifier: MIT
# The output attack matrix (test_attack_outputs.sh), its stalled attack:
# every output option onto a FIFO whose reader never reads. No hang: a
# long output (run, watch, metrics --interval) drops rows or bytes, says so
# and ends on SIGTERM; a whole-file output gives up after 5 s. A file of its
# own (the longest waits of the matrix), its cases run concurrently.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/attack_lib.sh"

attack_matrix stalled
[ "$ran" = "$nopts" ]
_report $? "stalled: every one of the $nopts output options ($ran cases)"
done_testing
