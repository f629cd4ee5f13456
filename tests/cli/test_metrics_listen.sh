#!/bin/sh
# SPDX-License-Identifier: MIT
# run/watch --metrics-listen follows serve's rules: an address other machines
# can reach needs --allow-remote (exit 2, the message names it), --web-config
# gives TLS and basic authentication (and the same slowing of wrong
# passwords). 0.0.0.0 only inside a network namespace of its own.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"
S=$SPARKOPS
NONV="env SPARKOPS_NVML_LIB=/nonexistent/libnvidia-ml.so.1"
R="--procfs $FIX/gb10-idle/proc --sysfs $FIX/gb10-idle/sys"
cd "$TMP" || exit 2

for cmd in run watch; do
	tail=""
	[ $cmd = run ] && tail="-- true"
	[ $cmd = watch ] && tail="--count 1"
	for a in 0.0.0.0:9852 "[::]:9852" 192.0.2.1:9852; do
		run $NONV $S $cmd --interval 0.1 --log /dev/null $R --metrics-listen "$a" $tail
		expect_rc 2 "$cmd --metrics-listen $a without --allow-remote is refused"
	done
	expect_err "^sparkops: --metrics-listen '192\.0\.2\.1:9852' is reachable from other machines: give --allow-remote" \
		"$cmd: the refusal names --allow-remote"
	[ ! -s "$OUT" ]
	_report $? "$cmd: nothing ran"
	run $NONV $S $cmd --interval 0.1 --log /dev/null $R --allow-remote $tail
	expect_rc 2 "$cmd --allow-remote without --metrics-listen is a usage error"
	run $NONV $S $cmd --interval 0.1 --log /dev/null $R --web-config "$TMP/none.yml" $tail
	expect_rc 2 "$cmd --web-config without --metrics-listen is a usage error"
done
run $S run --help
expect_out "--allow-remote" "run --help lists --allow-remote"
expect_out "--web-config FILE" "run --help lists --web-config"

# --allow-remote: 0.0.0.0 served, with one warning (a private network namespace)
if unshare -n true 2>/dev/null; then
	run unshare -n sh -c 'ip link set lo up 2>/dev/null; "$@"' sh \
		$NONV $S watch --count 2 --interval 0.2 --log /dev/null $R --metrics-listen 0.0.0.0:0 --allow-remote
	expect_rc 0 "--allow-remote: watch serves 0.0.0.0 (in a private network namespace)"
	expect_err "metrics-listen '0\.0\.0\.0:0' is open to other machines without TLS or authentication" "  with one warning"
	expect_err "metrics at http://0\.0\.0\.0:[0-9]+/metrics" "  and the address"
else
	skip_case "--metrics-listen 0.0.0.0 --allow-remote" "no network namespace"
fi

# --web-config: basic authentication on the run's endpoint
BCRYPT="$TMP/bcrypt"
${CC:-cc} -O2 -o "$BCRYPT" "$TOOLS/bcrypt.c" -lcrypt 2>"$TMP/bcrypt.err"
_report $? "the bcrypt helper builds"
printf 'basic_auth_users:\n  user: %s\n' "$("$BCRYPT" pw)" >"$TMP/auth.yml"
printf 'nonsense_key: 1\n' >"$TMP/bad.yml"
run $NONV $S run --interval 0.1 --log /dev/null $R --metrics-listen 127.0.0.1:0 --web-config "$TMP/bad.yml" -- true
expect_rc 2 "a bad --web-config is refused before the job starts"
expect_err "web-config '$TMP/bad.yml'" "  and named"
if command -v curl >/dev/null 2>&1; then
	$NONV $S run --interval 0.2 --log /dev/null $R --metrics-listen 127.0.0.1:0 --web-config "$TMP/auth.yml" -- \
		sleep 4 2>"$TMP/run.err" &
	RP=$!
	A=""
	i=0
	while [ -z "$A" ] && [ $i -lt 100 ]; do
		A=$(sed -n 's|^.*metrics at http://\(.*\)/metrics$|\1|p' "$TMP/run.err")
		[ -n "$A" ] || sleep 0.05
		i=$((i + 1))
	done
	sleep 0.5
	c1=$(curl -s --max-time 5 -o /dev/null -w '%{http_code}' "http://$A/metrics")
	c2=$(curl -s --max-time 5 -o "$OUT" -w '%{http_code}' -u user:pw "http://$A/metrics")
	c3=$(curl -s --max-time 5 -o /dev/null -w '%{http_code}' -u user:wrong "http://$A/metrics")
	[ "$c1" = 401 ] && [ "$c2" = 200 ] && [ "$c3" = 401 ]
	_report $? "run --metrics-listen --web-config: 401 without, 200 with, 401 wrong ($c1 $c2 $c3)"
	expect_out "^sparkops_pool_total_bytes " "  the exposition behind the password"
	wait $RP
else
	skip_case "--metrics-listen --web-config with curl" "curl is not installed"
fi
done_testing
