#!/bin/sh
# SPDX-License-Identifier: MIT
# Usage and --help say what the code takes.
. "$(dirname "$0")/lib.sh"
SC="$(dirname "$0")/../fake-nvml/scenarios"
S=$SPARKOPS
NODRV="env SPARKOPS_NVML_LIB=/nonexistent/libnvidia-ml.so.1"
GB10="env SPARKOPS_NVML_LIB=$FAKE_NVML FAKE_NVML_SCENARIO=$SC/gb10.scn"
DISC="env SPARKOPS_NVML_LIB=$FAKE_NVML FAKE_NVML_SCENARIO=$SC/discrete.scn"

# --- usage and help say what the code takes ------------------------------------------
run $S status --help
expect_out -- '--min-rss SIZE\] \[--no-processes\]' "status usage lists --min-rss and --no-processes"
run $S serve --help
expect_out 'SPARKOPS_MHD_LIB' "serve --help names SPARKOPS_MHD_LIB"

done_testing
