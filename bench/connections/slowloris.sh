#!/usr/bin/env bash
# Issue 21's thousand slow clients: GETs under wrk with and without 1,000
# slowloris connections (headers trickled one byte a second). Passes when the
# p99 with the slow clients stays under 2x the p99 without them, and the server
# cuts every slow client off (limits.header_timeout_seconds, 10 by default).
#
#   bench/connections/slowloris.sh            (SLOW=1000 DURATION=15 CONNECTIONS=32)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
SLOW=${SLOW:-1000}
DURATION=${DURATION:-15}
CONNECTIONS=${CONNECTIONS:-32}
command -v wrk >/dev/null || apt-get install -y -qq wrk >/dev/null
ulimit -n "$(ulimit -Hn)"  # the hard limit: the slow clients and the server each need one descriptor per connection
source bench/lib.sh
bench_binary
bench_database ferry_bench_slowloris
echo "bench-password" | "$BIN" user add slowbench >/dev/null
TOKEN=$("$BIN" token issue slowbench | tail -n1)
bench_serve FERRY_LIMITS_MAX_CONNECTIONS=$((SLOW * 2 + 1000))
URL="http://127.0.0.1:$PORT/v1/auth/me"
p99() { wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" --latency -H "Authorization: Bearer $TOKEN" "$URL" | tee /dev/stderr | awk '$1 == "99%" { print $2 }'; }
ms() { python3 -c 'import sys; v=sys.argv[1]; print(float(v[:-2]) if v.endswith("ms") else float(v[:-2])/1000 if v.endswith("us") else float(v[:-1])*1000)' "$1"; }
echo "== without slow clients: wrk -t2 -c$CONNECTIONS -d${DURATION}s --latency GET /v1/auth/me" >&2
BASE=$(ms "$(p99)")
python3 bench/connections/slowloris.py "$PORT" "$SLOW" $((DURATION + 15)) > /tmp/slowloris.$$ &
SLOWPID=$!
sleep 3
echo "== with $SLOW slow clients" >&2
LOADED=$(ms "$(p99)")
wait $SLOWPID
CUT=$(cat /tmp/slowloris.$$); rm -f /tmp/slowloris.$$
RATIO=$(python3 -c "print(f'{$LOADED / $BASE:.2f}')")
ALL_CUT=$(python3 -c "import re,sys; m=re.search(r'(\d+) opened, (\d+) cut', sys.argv[1]); print(m and m.group(1) == m.group(2))" "$CUT")
VERDICT=FAIL
if python3 -c "import sys; sys.exit(0 if $LOADED < 2 * $BASE else 1)" && [ "$ALL_CUT" = True ]; then VERDICT=PASS; fi
echo "slowloris: p99 ${BASE} ms without, ${LOADED} ms with $SLOW slow clients (${RATIO}x); $CUT: $VERDICT"
