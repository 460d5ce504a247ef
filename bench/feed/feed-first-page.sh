#!/usr/bin/env bash
# A collaborator's first changes page over a large table, as issue 25 measured it:
# TERMS terms of another user (sets of 100), a reader collaborating on 19 of those
# sets, and `GET /v1/changes?limit=500` as the reader, with auto_explain logging
# every executed plan (JIT sections, sequential scans, buffers).
#
#   bench/feed/feed-first-page.sh            228,000 terms, ferry's defaults (database.jit off)
#   TERMS=1000000 bench/feed/feed-first-page.sh
#   FERRY_DATABASE_JIT=true bench/feed/feed-first-page.sh     the same with JIT allowed
#
# Needs the dev services (bash deploy/local.sh start) and a built ferry
# (FERRY_BIN, default: the release build, built if missing).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
TERMS=${TERMS:-228000}
PORT=${PORT:-18482}
REQUESTS=${REQUESTS:-6}
eval "$(bash deploy/local.sh env)"
LOCAL=${FERRY_LOCAL_DIR:-$ROOT/.local}
PG_PORT=${FERRY_PG_PORT:-54329}
BIN=${FERRY_BIN:-}
if [ -z "$BIN" ]; then
  swift build -c release --product ferry >/dev/null
  BIN=$(swift build -c release --show-bin-path)/ferry
fi
DB=feed_first_page_$$
url_for() { python3 -c "import sys,urllib.parse as u; p=u.urlparse(sys.argv[1]); print(p._replace(path='/'+sys.argv[2]).geturl())" "$1" "$2"; }
OWNER=$(url_for "$FERRY_DATABASE_MIGRATION_URL" "$DB")
APP=$(url_for "$FERRY_DATABASE_URL" "$DB")
su_psql() { runuser -u postgres -- psql -X -q -h "$LOCAL/run" -p "$PG_PORT" "$@"; }
SERVER_PID=
cleanup() {
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null || true
  su_psql -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" || true
}
trap cleanup EXIT
su_psql -d postgres -c "CREATE DATABASE $DB OWNER ferry_owner"
FERRY_DATABASE_MIGRATION_URL=$OWNER "$BIN" migrate apply --dir examples/study/migrations | tail -n1
psql -X -q -v ON_ERROR_STOP=1 "$OWNER" -v sets=$((TERMS / 100)) <<'SQL' >/dev/null
SELECT ferry.create_user('bulk', 'bench'), ferry.create_user('reader', 'bench');
INSERT INTO app.study_sets (creator_id, title)
  SELECT (SELECT id FROM ferry.user_by_name('bulk')), 'bulk ' || i FROM generate_series(1, :sets) i;
INSERT INTO app.terms (set_id, word, definition)
  SELECT s.id, 'word ' || i, 'a definition of some length for row ' || i FROM app.study_sets s CROSS JOIN generate_series(1, 100) i;
INSERT INTO app.set_collaborators (set_id, user_id)
  SELECT s.id, (SELECT id FROM ferry.user_by_name('reader')) FROM app.study_sets s ORDER BY s.title LIMIT 19;
ANALYZE app.terms, app.study_sets, app.set_collaborators;
SQL
su_psql -d "$DB" -c "ALTER DATABASE $DB SET session_preload_libraries = 'auto_explain'" \
  -c "ALTER DATABASE $DB SET auto_explain.log_min_duration = 10" -c "ALTER DATABASE $DB SET auto_explain.log_analyze = on"
LOG="$LOCAL/run/postgres.log"
START_LINE=$(wc -l < "$LOG")
FERRY_DATABASE_URL=$APP FERRY_DATABASE_MIGRATION_URL=$OWNER FERRY_LISTEN_PORT=$PORT FERRY_LOGGING_LEVEL=warning \
  FERRY_MEMCACHED_SERVERS=$FERRY_MEMCACHED_SERVERS "$BIN" serve >/dev/null 2>&1 &
SERVER_PID=$!
for _ in $(seq 100); do curl -fs "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
TOKEN=$(curl -fs -u reader:bench -X POST "http://127.0.0.1:$PORT/v1/auth/token" | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')
echo "first changes page (limit=500) as a collaborator on 19 sets, $TERMS terms, database.jit=${FERRY_DATABASE_JIT:-false}:"
for _ in $(seq "$REQUESTS"); do
  curl -fs -o /dev/null -w "  %{http_code} %{time_total} s\n" -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT/v1/changes?limit=500"
done
PLANS=$(tail -n +"$((START_LINE + 1))" "$LOG")
echo "statements over 10 ms: $(grep -c 'duration:' <<<"$PLANS" || true); with a JIT section: $(grep -c '^\s*JIT:' <<<"$PLANS" || true);" \
  "executed sequential scans of terms: $(grep 'Seq Scan on terms' <<<"$PLANS" | grep -vc 'never executed' || true)"
