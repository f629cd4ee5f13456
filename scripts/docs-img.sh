#!/bin/sh
# SPDX-License-Identifier: MIT
# The README's example chart, drawn by sparkops itself from a fixture log
# (a thermal episode, the guard stopping the job) with a training log's
# checkpoint and evaluation lines marked. Deterministic: the chart's clock is
# the log's own UTC offset, so the file only changes when the code does.
# And serve's live page as a screenshot (docs/img/serve-page.png), and with
# --peer, two nodes side by side (docs/img/serve-nodes.png).
# Usage: scripts/docs-img.sh [BUILD] [OUT] [svg]
# (svg: the chart only, no screenshot: what tests/cli/test_report.sh compares)
BUILD=${1:-build}
OUT=${2:-docs/img/report-example.svg}
ONLY=${3:-}
cd "$(dirname "$0")/.." || exit 2
L=tests/fixtures/logs
"$BUILD/sparkops" report "$L/thermal-guard.csv" --svg "$OUT" \
	--training-log "$L/train-example.log" \
	--training-regex '^([0-9-]+ [0-9:,]+) .*(Saving model checkpoint|Running Evaluation)' >/dev/null || exit 1
[ "$ONLY" != svg ] || exit 0

# serve's live page on the gb10-loaded fixture with the fake NVML, in headless
# Chromium (docs/img/serve-page.png); skipped, with the reason, without it
CHROME=$(command -v chromium || true)
if [ -z "$CHROME" ]; then
	echo "docs-img: serve-page.png skipped: chromium is not installed (apt-get install chromium)" >&2
	exit 0
fi
tmp=$(mktemp -d)
trap 'kill $spid 2>/dev/null; rm -rf "$tmp"' EXIT
F=tests/fixtures/gb10-loaded
SPARKOPS_NVML_LIB="$BUILD/libfake-nvml.so" FAKE_NVML_SCENARIO=tests/fake-nvml/scenarios/gb10.scn \
	"$BUILD/sparkops" serve --listen 127.0.0.1:0 --procfs "$F/proc" --sysfs "$F/sys" >"$tmp/out" 2>&1 &
spid=$!
i=0
while [ $i -lt 50 ] && ! grep -q 'serving http' "$tmp/out"; do sleep 0.1; i=$((i + 1)); done
addr=$(sed -n 's|.*serving http://\(.*\)/metrics$|\1|p' "$tmp/out")
# a minute of history for the sparklines
i=0
while [ $i -lt 20 ]; do curl -s "http://$addr/api/status" >/dev/null; sleep 1.05; i=$((i + 1)); done
timeout 60 "$CHROME" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
	--disable-background-networking --disable-component-update --disable-sync --user-data-dir="$tmp/u" \
	--virtual-time-budget=3000 --hide-scrollbars --window-size=1280,640 \
	--screenshot="$(dirname "$OUT")/serve-page.png" "http://$addr/" 2>/dev/null

# serve --peer: two nodes side by side (the page's NODES table), a second
# serve on the gb10-idle fixture standing in for the other Spark and a third
# peer that is not there, marked down (docs/img/serve-nodes.png)
F2=tests/fixtures/gb10-idle
SPARKOPS_NVML_LIB="$BUILD/libfake-nvml.so" FAKE_NVML_SCENARIO=tests/fake-nvml/scenarios/gb10.scn \
	"$BUILD/sparkops" serve --listen 127.0.0.1:0 --procfs "$F2/proc" --sysfs "$F2/sys" >"$tmp/out2" 2>&1 &
bpid=$!
trap 'kill $spid $bpid $apid 2>/dev/null; rm -rf "$tmp"' EXIT
i=0
while [ $i -lt 50 ] && ! grep -q 'serving http' "$tmp/out2"; do sleep 0.1; i=$((i + 1)); done
baddr=$(sed -n 's|.*serving http://\(.*\)/metrics$|\1|p' "$tmp/out2")
SPARKOPS_NVML_LIB="$BUILD/libfake-nvml.so" FAKE_NVML_SCENARIO=tests/fake-nvml/scenarios/gb10.scn \
	"$BUILD/sparkops" serve --listen 127.0.0.1:0 --procfs "$F/proc" --sysfs "$F/sys" \
	--peer "http://$baddr" --peer http://127.0.0.1:1 >"$tmp/out3" 2>&1 &
apid=$!
i=0
while [ $i -lt 50 ] && ! grep -q 'serving http' "$tmp/out3"; do sleep 0.1; i=$((i + 1)); done
aaddr=$(sed -n 's|.*serving http://\(.*\)/metrics$|\1|p' "$tmp/out3")
i=0
while [ $i -lt 3 ]; do curl -s "http://$aaddr/api/status" >/dev/null; sleep 1.05; i=$((i + 1)); done
timeout 60 "$CHROME" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
	--disable-background-networking --disable-component-update --disable-sync --user-data-dir="$tmp/u2" \
	--virtual-time-budget=3000 --hide-scrollbars --window-size=1440,300 \
	--screenshot="$(dirname "$OUT")/serve-nodes.png" "http://$aaddr/" 2>/dev/null
