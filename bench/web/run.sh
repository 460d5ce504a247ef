#!/usr/bin/env bash
# FerryWeb's benchmarks (issue 50), in headless Chromium against a real `ferry serve`:
# an initial sync of 100,000 todos (1,000 lists of 100) into IndexedDB, reads of 100 rows
# every 5 ms during it, and 10,000 offline edits across 1,000 todos written and uploaded.
# The same work as FerryKit's bench/ferrykit.sh (FerryKitBenchTests), for figures side by side.
#
#   bash bench/web/run.sh                 # release ferry (.build/release/ferry), 100,000 rows
#   FERRYWEB_BENCH_ROWS=20000 bash bench/web/run.sh
#   FERRY_BIN=.build/debug/ferry bash bench/web/run.sh
#
# Needs deploy/local.sh's services (started here) and a built ferry; builds nothing but
# FerryWeb itself (tsc). The store is on disk: the browser's default profile, not an
# incognito context, whose IndexedDB lives in memory.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
bash deploy/local.sh start >/dev/null
eval "$(bash deploy/local.sh env)"
FERRY=${FERRY_BIN:-$ROOT/.build/release/ferry}
[ -x "$FERRY" ] || { echo "no $FERRY: swift build -c release --product ferry (or FERRY_BIN=.build/debug/ferry)" >&2; exit 1; }
(cd clients/web && rm -rf dist && tsc -p .)
ROWS=${FERRYWEB_BENCH_ROWS:-100000}

DB="ferrywebbench_$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"
OWNER_BASE=$FERRY_DATABASE_MIGRATION_URL
psql -q "$OWNER_BASE" -c "CREATE DATABASE $DB" >/dev/null
export FERRY_DATABASE_MIGRATION_URL="${OWNER_BASE%/*}/$DB"
export FERRY_DATABASE_URL="${FERRY_DATABASE_URL%/*}/$DB"
SERVE_PID=
LOG=${FERRYWEB_BENCH_LOG:-$(mktemp)}
cleanup() {
  [ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null && wait "$SERVE_PID" 2>/dev/null || true
  psql -q "$OWNER_BASE" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null || true
  [ -n "${FERRYWEB_BENCH_LOG:-}" ] || rm -f "$LOG"
}
trap cleanup EXIT

"$FERRY" migrate --dir "$ROOT/examples/todo/migrations" >/dev/null
printf 'bench-password\n' | "$FERRY" user add webbench >/dev/null
TOKEN=$("$FERRY" token issue webbench)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
FERRY_LISTEN_PORT=$PORT FERRY_LISTEN_HOST=127.0.0.1 "$FERRY" serve >"$LOG" 2>&1 &
SERVE_PID=$!
for _ in $(seq 1 300); do
  curl -fs "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 && break
  kill -0 "$SERVE_PID" 2>/dev/null || { cat "$LOG" >&2; exit 1; }
  sleep 0.1
done
USER_ID=$(curl -fs -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT/v1/auth/me" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get("id") or d["user_id"])')
# The rows, as FerryKitBenchTests seeds its terms: lists of 100 todos, ranks in order.
psql -q "$FERRY_DATABASE_MIGRATION_URL" -v ON_ERROR_STOP=1 >/dev/null <<SQL
INSERT INTO app.lists (owner_id, title) SELECT '$USER_ID'::uuid, 'list ' || i FROM generate_series(1, $ROWS / 100) i;
INSERT INTO app.todos (list_id, title, rank)
SELECT l.id, 'todo ' || i || ' of some length, as a user types them', 'r' || lpad(i::text, 3, '0') || 'V'
  FROM app.lists l CROSS JOIN generate_series(1, 100) i;
SQL
echo "ferry: $FERRY ($("$FERRY" version 2>/dev/null | head -1)), $ROWS todos, load average $(cut -d' ' -f1-3 /proc/loadavg)"
FERRY_PORT=$PORT FERRY_TOKEN=$TOKEN FERRYWEB_BENCH_ROWS=$ROWS node "$ROOT/bench/web/bench.mjs"
