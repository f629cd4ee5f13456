#!/bin/sh
# SPDX-License-Identifier: MIT
# Usage and --help say what the code takes.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS

# --- usage and help say what the code takes ------------------------------------------
run $S status --help
expect_out -- '--min-rss SIZE\] \[--no-processes\]' "status usage lists --min-rss and --no-processes"
run $S serve --help
expect_out 'SPARKOPS_MHD_LIB' "serve --help names SPARKOPS_MHD_LIB"

done_testing
