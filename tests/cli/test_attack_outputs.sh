#!/bin/sh
# SPDX-License-Identifier: MIT
# Issue 24: the attack matrix of every path sparkops writes, generated from
# the option tables. Each command's --sparkops-options marks its output
# paths ("out": a file, "out-dir": a folder it writes sparkops.prom into);
# every such option of every command is run, as root, through every attack:
#
#   absent, regular, symlink (to a root-owned file, planted by nobody),
#   symparent (the folder is nobody's link to a root-only folder), swapparent
#   (the folder is replaced by such a link mid-run: long outputs only),
#   block (a block node), char (a /dev/null node), fifo (with a reader),
#   stalled (a FIFO whose reader never reads: no hang, SIGTERM works, rows or
#   bytes said dropped), folder, full (a 16 KiB tmpfs, full), hardlink (to
#   another user's file), same (the path also given as another output or an
#   input of the command; report's log too).
#
# A new output option gets the matrix without a new test; a command with an
# output option and no recipe in attack_lib.sh fails. Each case runs in its own mount
# namespace (unshare -m) on a private tmpfs: nodes are made by mknod there,
# never in the real /dev. Skipped (TAP SKIP) only where unshare is refused.
# The cases wait on the programs they start, so they run concurrently
# (attack_lib.sh), and the attacks that wait longest have files of their own
# for prove -j: test_attack_outputs_stalled.sh (stalled, 5 s and more each)
# and test_attack_outputs_swap.sh (swapparent). This file runs the others.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/attack_lib.sh"

[ "$nopts" -ge 6 ]
_report $? "the tables mark the output paths ($nopts options: $(awk '{printf "%s %s; ", $1, $2}' "$TMP/matrix"))"
attack_matrix absent regular symlink symparent block char fifo folder full hardlink same
# ten attacks apply to every option, same to those with a partner (with
# stalled, test_attack_outputs_stalled.sh: eleven, as when one file ran all)
[ "$ran" -ge $((nopts * 10 + 1)) ]
_report $? "the matrix ran $ran cases"
done_testing
