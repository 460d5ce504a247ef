#!/usr/bin/env bash
# FerryWeb's benchmarks (issue 50), in headless Chromium against a real `ferry serve`:
# an initial sync of 100,000 todos (1,000 lists of 100) into IndexedDB, reads of 100 rows
# every 5 ms during it, and 10,000 offline edits across 1,000 todos written and uploaded:
# one store.write each, then (a FerryWeb that has it) store.writeMany of 100, then one of all.
# Where a single edit's time goes: bench/web/edits.mjs (no server).
# The same work as FerryKit's bench/ferrykit/ferrykit.sh (FerryKitBenchTests), for figures side by side.
#
#   bash bench/web/run.sh                 # release ferry (FERRY_BIN, or a release build), 100,000 rows
#   FERRYWEB_BENCH_ROWS=20000 bash bench/web/run.sh
#   FERRY_BIN=.build/debug/ferry bash bench/web/run.sh
#   FERRYWEB_BENCH_DIST=/tmp/dist-old bash bench/web/run.sh   # that build of clients/web/dist, not
#                                         # a fresh one: to alternate two builds in one session
#
# Needs deploy/local.sh's services (started here); builds FerryWeb (tsc), and a release
# ferry unless FERRY_BIN names one. The store is on disk: the browser's default profile, not an
# incognito context, whose IndexedDB lives in memory.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
# The dev services, a scratch database and `ferry serve` on a free port: bench/lib.sh's.
source bench/lib.sh
bench_binary
if [ -n "${FERRYWEB_BENCH_DIST:-}" ]; then
  rm -rf clients/web/dist && cp -a "$FERRYWEB_BENCH_DIST" clients/web/dist
else
  (cd clients/web && rm -rf dist && tsc -p .)
fi
ROWS=${FERRYWEB_BENCH_ROWS:-100000}

bench_database "ferrywebbench_$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')" examples/todo/migrations
printf 'bench-password\n' | "$BIN" user add webbench >/dev/null
TOKEN=$("$BIN" token issue webbench)
bench_serve
USER_ID=$(curl -fs -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT/v1/auth/me" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get("id") or d["user_id"])')
# The rows, as FerryKitBenchTests seeds its terms: lists of 100 todos, ranks in order.
psql -q "$FERRY_DATABASE_MIGRATION_URL" -v ON_ERROR_STOP=1 >/dev/null <<SQL
INSERT INTO app.lists (owner_id, title) SELECT '$USER_ID'::uuid, 'list ' || i FROM generate_series(1, $ROWS / 100) i;
INSERT INTO app.todos (list_id, title, rank)
SELECT l.id, 'todo ' || i || ' of some length, as a user types them', 'r' || lpad(i::text, 3, '0') || 'V'
  FROM app.lists l CROSS JOIN generate_series(1, 100) i;
SQL
echo "ferry: $BIN ($("$BIN" version 2>/dev/null | head -1)), $ROWS todos, FerryWeb ${FERRYWEB_BENCH_DIST:-built now}, load average $(cut -d' ' -f1-3 /proc/loadavg)"
FERRY_PORT=$PORT FERRY_TOKEN=$TOKEN FERRYWEB_BENCH_ROWS=$ROWS node "$ROOT/bench/web/bench.mjs"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
