#!/usr/bin/env bash
# Issue 22's full first sync: a user with 100,000 terms in 1,000 sets syncs
# everything, by Index pages and by the changes feed, with and without gzip;
# bytes on the wire (headers included) and wall time (best of 3), one client
# on loopback. Needs the dev services.
#
#   bench/first-sync.sh            (FERRY_BIN=path skips the release build)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
BIN=${FERRY_BIN:-}
if [ -z "$BIN" ]; then swift build -c release --product ferry >/dev/null; BIN=.build/release/ferry; fi
bash deploy/local.sh start >/dev/null
eval "$(bash deploy/local.sh env)"
DB=ferry_bench_first_sync
OWNER_BASE=${FERRY_DATABASE_MIGRATION_URL%/*}
APP_BASE=${FERRY_DATABASE_URL%/*}
psql -X -q "$OWNER_BASE/postgres" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB"
export FERRY_DATABASE_MIGRATION_URL="$OWNER_BASE/$DB" FERRY_DATABASE_URL="$APP_BASE/$DB"
"$BIN" migrate >/dev/null
echo "bench-password" | "$BIN" user add syncer >/dev/null
psql -X -q -v ON_ERROR_STOP=1 "$FERRY_DATABASE_MIGRATION_URL" <<'SQL'
INSERT INTO app.study_sets (creator_id, title, description)
SELECT (SELECT id FROM ferry.users WHERE name = 'syncer'), 'set ' || s, 'a set of a hundred terms' FROM generate_series(1, 1000) s;
INSERT INTO app.terms (set_id, word, definition, rank)
SELECT s.id, 'word ' || i, 'a definition of some length for term ' || i, 'r' || lpad(i::text, 3, '0') || 'V'
  FROM app.study_sets s CROSS JOIN generate_series(1, 100) i;
ANALYZE app.study_sets, app.terms;
SQL
TOKEN=$("$BIN" token issue syncer | tail -n1)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
FERRY_LISTEN_PORT=$PORT FERRY_LOGGING_LEVEL=warning "$BIN" serve &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true; wait 2>/dev/null || true; psql -X -q "$OWNER_BASE/postgres" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true' EXIT
for _ in $(seq 100); do curl -fs "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
# The feed serves a write once every transaction older than it has ended, cluster-wide.
sleep 1
python3 bench/first-sync.py "$PORT" "$TOKEN"
