#!/usr/bin/env bash
# FerryWeb's browser tests: a scratch database migrated to examples/todo, a real
# `ferry serve` on it, and browser/run.mjs driving headless Chromium against it.
# Needs the environment deploy/test.sh sets (FERRY_DATABASE_URL, _MIGRATION_URL,
# FERRY_MEMCACHED_SERVERS) and a built ferry (FERRY_BIN, default .build/debug/ferry).
set -euo pipefail
WEB=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$WEB/../.." && pwd)
FERRY=${FERRY_BIN:-$ROOT/.build/debug/ferry}
: "${FERRY_DATABASE_MIGRATION_URL:?run under deploy/local.sh env}"
[ -d "$WEB/dist" ] || (cd "$WEB" && tsc -p .)

DB="ferryweb_$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"
OWNER_BASE=$FERRY_DATABASE_MIGRATION_URL
psql -q "$OWNER_BASE" -c "CREATE DATABASE $DB" >/dev/null
export FERRY_DATABASE_MIGRATION_URL="${OWNER_BASE%/*}/$DB"
export FERRY_DATABASE_URL="${FERRY_DATABASE_URL%/*}/$DB"
SERVE_PID=
cleanup() {
  [ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null && wait "$SERVE_PID" 2>/dev/null || true
  psql -q "$OWNER_BASE" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null || true
}
trap cleanup EXIT

# The todo example, and for the subscription test a stream of a list with what hangs
# from it, lists made public by a flag (issue 46's rules; the example itself has none).
MIGRATIONS=$(mktemp -d)
cp "$ROOT"/examples/todo/migrations/*.sql "$MIGRATIONS/"
cat >"$MIGRATIONS/0900_web_test_streams.sql" <<'SQL'
ALTER TABLE app.lists ADD COLUMN is_public boolean NOT NULL DEFAULT false;
SELECT ferry.sync_public('app.lists', flag => 'is_public');
SELECT ferry.sync_stream('list', scope => 'app.lists');
-- A second stream of the same rows: two subscriptions that cover one row (the TTL test).
SELECT ferry.sync_stream('board', scope => 'app.lists');
SQL
"$FERRY" migrate --dir "$MIGRATIONS" >/dev/null
rm -rf "$MIGRATIONS"
printf 'web-test-password\n' | "$FERRY" user add webtest >/dev/null
FERRY_TOKEN=$("$FERRY" token issue webtest)
# A second user, with whom the first shares a list and then stops sharing it.
printf 'web-test-password\n' | "$FERRY" user add webfriend >/dev/null
FERRY_TOKEN2=$("$FERRY" token issue webfriend)
# A third, whose thousands of notes an initial sync stopped mid-way reads (no other test sees them).
printf 'web-test-password\n' | "$FERRY" user add webbulk >/dev/null
FERRY_TOKEN3=$("$FERRY" token issue webbulk)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# live.max_wait_streams at 2: a device with three subscriptions must split its waits.
FERRY_LIVE_MAX_WAIT_STREAMS=2 FERRY_LISTEN_PORT=$PORT FERRY_LISTEN_HOST=127.0.0.1 "$FERRY" serve >"${TMPDIR:-/tmp}/$DB.log" 2>&1 &
SERVE_PID=$!
for _ in $(seq 1 300); do
  curl -fs "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 && break
  kill -0 "$SERVE_PID" 2>/dev/null || { cat "${TMPDIR:-/tmp}/$DB.log" >&2; exit 1; }
  sleep 0.1
done
FERRY_PORT=$PORT FERRY_TOKEN=$FERRY_TOKEN FERRY_TOKEN2=$FERRY_TOKEN2 FERRY_TOKEN3=$FERRY_TOKEN3 node "$WEB/browser/run.mjs"
