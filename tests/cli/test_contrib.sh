#!/bin/sh
# SPDX-License-Identifier: MIT
# contrib/: the alert rules pass `promtool test rules`, the example config
# `promtool check config`, the dashboard and the alerts use only metric names
# that exist (docs/metrics.md lists every name sparkops exports), the job
# families lint clean, and the systemd unit verifies.
. "$(dirname "$0")/lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
C="$top/contrib"
SC="$top/tests/fake-nvml/scenarios"
DOC="$top/docs/metrics.md"

run promtool check rules "$C/prometheus/alerts.yml"
expect_rc 0 "promtool check rules alerts.yml"
run sh -c "cd '$C/prometheus' && promtool test rules alerts_test.yml"
expect_rc 0 "promtool test rules alerts_test.yml"
expect_out 'SUCCESS' "the alert tests pass"
for a in SparkopsThermalSlowdownSustained SparkopsPowerPlateauThroughputDrop SparkopsBudgetLow \
	SparkopsMemoryPressureFull SparkopsCompetingProcessAppeared; do
	grep -q "alertname: $a" "$C/prometheus/alerts_test.yml"
	_report $? "alert $a has a test"
done
run promtool check config "$C/prometheus/prometheus.yml"
expect_rc 0 "promtool check config prometheus.yml"

# the job families (run/watch --metrics-listen) lint clean too
CFLAGS_T="-std=c11 -D_GNU_SOURCE -I$top/src"
case "$BUILD_DIR" in *-asan) CFLAGS_T="$CFLAGS_T -fsanitize=address,undefined" ;; esac
${CC:-cc} $CFLAGS_T -o "$TMP/promjob" "$top/tests/tools/promjob.c" "$BUILD_DIR/libsparkops.a" -lm 2>"$ERR"
_report $? "the job-families printer builds"
"$TMP/promjob" >"$OUT" && promtool check metrics <"$OUT" >"$ERR" 2>&1
_report $? "promtool check metrics: the job families"
"$TMP/promjob" early >"$OUT" && promtool check metrics <"$OUT" >"$ERR" 2>&1
_report $? "promtool check metrics: the job families before any throughput"
expect_no_out 'throughput' "no throughput parsed: no throughput series"

# every name exported is documented; every name used in contrib/ exists
names="$TMP/names"
: >"$names"
for f in gb10-loaded gb10-usbpd discrete container-v2; do
	sc=gb10
	[ $f = discrete ] && sc=discrete
	env SPARKOPS_NVML_LIB="$FAKE_NVML" FAKE_NVML_SCENARIO="$SC/$sc.scn" FAKE_NVML_PROCS=3301:1000 \
		$SPARKOPS metrics $(sysroot $f) | sed -n 's/^# TYPE \([a-z0-9_]*\) .*/\1/p' >>"$names"
done
"$TMP/promjob" | sed -n 's/^# TYPE \([a-z0-9_]*\) .*/\1/p' >>"$names"
sort -u "$names" -o "$names"
[ "$(wc -l <"$names")" -ge 60 ]
_report $? "the fixtures exercise $(wc -l <"$names") metric families"
missing=""
for n in $(cat "$names"); do grep -q "\`$n\`" "$DOC" || missing="$missing $n"; done
[ -z "$missing" ]
_report $? "docs/metrics.md lists every exported name${missing:+ (missing:$missing)}"
used=$(grep -ohE 'sparkops_[a-z0-9_]+' "$C/prometheus/alerts.yml" "$C/grafana/sparkops.json" | sort -u)
unknown=""
for n in $used; do grep -qx "$n" "$names" || unknown="$unknown $n"; done
[ -z "$unknown" ]
_report $? "alerts and dashboard use only exported names${unknown:+ (unknown:$unknown)}"
for n in $(grep -oE '^\| `sparkops_[a-z0-9_]+`' "$DOC" | tr -d '|` '); do
	grep -qx "$n" "$names" || grep -q "\"$n\"" "$top/src/out/prom.c"
	_report $? "documented name $n exists"
done

# the dashboard
jq -e '.uid == "sparkops" and (.panels | length) > 10' "$C/grafana/sparkops.json" >/dev/null 2>&1
_report $? "the dashboard is valid JSON with panels"
jq -e '[.panels[] | select(.type != "row") | .targets[]?.expr] | all(test("sparkops_"))' "$C/grafana/sparkops.json" >/dev/null 2>&1
_report $? "every dashboard query uses sparkops names"
jq -e '[.panels[] | select(.type != "row") | .targets | length > 0] | all' "$C/grafana/sparkops.json" >/dev/null 2>&1
_report $? "every dashboard panel has a query"
# the dashboard's queries parse (promtool lints them as rule expressions)
jq -r '.panels[] | select(.type != "row") | .targets[].expr' "$C/grafana/sparkops.json" |
	sed 's/\$__rate_interval/5m/g; s/\$instance/.*/g' |
	awk 'BEGIN{print "groups:\n  - name: dashboard\n    rules:"} {gsub(/\x27/,"\x27\x27"); printf "      - record: dashboard:q%d\n        expr: \x27%s\x27\n", NR, $0}' >"$TMP/dash_rules.yml"
run promtool check rules "$TMP/dash_rules.yml"
expect_rc 0 "every dashboard query is valid PromQL"

# the systemd unit
if command -v systemd-analyze >/dev/null 2>&1; then
	sed "s|/usr/local/bin/sparkops|$SPARKOPS|" "$C/sparkops.service" >"$TMP/sparkops.service"
	run systemd-analyze verify --man=no "$TMP/sparkops.service"
	[ "$RC" = 0 ] && [ ! -s "$ERR" ]
	_report $? "systemd-analyze verify sparkops.service"
	run systemd-analyze security --offline=true --threshold=25 "$TMP/sparkops.service"
	expect_rc 0 "systemd-analyze security: exposure at most 2.5"
else
	_report 0 "systemd-analyze not installed # skip"
fi
for k in DynamicUser=yes ProtectSystem=strict ProtectHome=yes PrivateTmp=yes NoNewPrivileges=yes \
	RestrictAddressFamilies= MemoryMax= 'ExecStart=.* serve '; do
	grep -q "^$k" "$C/sparkops.service"
	_report $? "the unit sets $k"
done
done_testing
