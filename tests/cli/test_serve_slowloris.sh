#!/bin/sh
# SPDX-License-Identifier: MIT
# sparkops serve under a slowloris: 8 addresses x 8 connections trickle header
# lines; the whole-request deadline cuts them while real scrapes get through,
# with the default limits and with --max-connections 64 filled by the attack.
# Loopback only (127.0.0.0/8); every loop and flood is bounded in count and
# time. (Apart from test_serve_secure.sh: each attack lasts 10 s.)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"
S=$SPARKOPS

# start_secure ARGS... : start_serve on a loopback address
start_secure() {
	start_serve --listen 127.0.0.1:0 "$@"
}

# --- slowloris: 8 addresses x 8 connections, one header line every 2 s -----------------------------
# scrape_during_attack NAME : 8 trickling clients for 10 s, a real scrape every
# second meanwhile (each may take up to 8 s, within Prometheus' 10 s timeout)
scrape_during_attack() {
	for a in 2 3 4 5 6 7 8 9; do
		"$HTTPC" trickle $HOST $PORT 8 2000 10000 127.0.0.$a >"$TMP/trickle.$a" &
		eval "tp$a=\$!"
	done
	sleep 0.5
	okn=0
	n=0
	t_end=$(($(date +%s) + 10))
	while [ $n -lt 12 ] && [ "$(date +%s)" -lt $t_end ]; do
		code=$(curl -s --max-time 8 -o /dev/null -w '%{http_code}' "http://$ADDR/metrics")
		[ "$code" = 200 ] && okn=$((okn + 1))
		n=$((n + 1))
		sleep 1
	done
	for a in 2 3 4 5 6 7 8 9; do eval "wait \$tp$a"; done
	[ $n -ge 5 ] && [ $okn = $n ]
	_report $? "$1: every real scrape answered during the attack ($okn of $n)"
	cut=$(cat "$TMP"/trickle.* | sed -n 's/.*cut=\([0-9]*\).*/\1/p' | awk '{s += $1} END {print s + 0}')
	life=$(cat "$TMP"/trickle.* | sed -n 's/.*max_life_ms=\([0-9]*\).*/\1/p' | sort -n | tail -1)
	# 5 s deadline + the reaper's 0.2 s + one 2 s trickle to notice
	[ "$cut" -ge 64 ] && [ "${life:-99999}" -le 8000 ]
	_report $? "$1: trickled requests are cut at the deadline (cut $cut, longest ${life} ms)"
	rm -f "$TMP"/trickle.*
}
start_secure
scrape_during_attack "defaults"
stop_serve
# the reported case: 64 trickling connections fill --max-connections 64
start_secure --max-connections 64
scrape_during_attack "--max-connections 64 filled by the attack"
stop_serve
expect_rc 0 "clean exit after the attack"
done_testing
