#!/bin/sh
# SPDX-License-Identifier: MIT
# The README's example chart, drawn by sparkops itself from a fixture log
# (a thermal episode, the guard stopping the job) with a training log's
# checkpoint and evaluation lines marked. Deterministic: the chart's clock is
# the log's own UTC offset, so the file only changes when the code does.
# Usage: scripts/docs-img.sh [BUILD] [OUT]
BUILD=${1:-build}
OUT=${2:-docs/img/report-example.svg}
cd "$(dirname "$0")/.." || exit 2
L=tests/fixtures/logs
exec "$BUILD/sparkops" report "$L/thermal-guard.csv" --svg "$OUT" \
	--training-log "$L/train-example.log" \
	--training-regex '^([0-9-]+ [0-9:,]+) .*(Saving model checkpoint|Running Evaluation)' >/dev/null
