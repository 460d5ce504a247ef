#!/usr/bin/env bash
# Changes feed benchmark (docs/changes-feed.md).
#
#   bench/feed/changes.sh            throughput + plan over 1,000,000 rows (Swift harness),
#                               then wrk against a release `ferry serve` for the empty poll
#   bench/feed/changes.sh http       only part 2 (release server: throughput with curl, empty poll with wrk)
#   bench/feed/changes.sh soak       the race test 200 times with longer transactions (FERRY_SOAK=1)
#
# Needs the dev services (FERRY_TEST_OWNER_URL, FERRY_TEST_APP_URL, FERRY_TEST_MEMCACHED as
# exported by deploy/test.sh / deploy/local.sh env) and wrk. Targets: >= 20,000 rows/s
# delivered; empty poll <= 2 ms server time and >= 5,000 req/s.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
: "${FERRY_TEST_OWNER_URL:?set FERRY_TEST_OWNER_URL (see deploy/test.sh)}"
: "${FERRY_TEST_APP_URL:?set FERRY_TEST_APP_URL}"
: "${FERRY_TEST_MEMCACHED:?set FERRY_TEST_MEMCACHED}"
ROWS=${ROWS:-1000000}
CHANGES=${CHANGES:-10000}
PORT=${PORT:-18481}
DURATION=${DURATION:-10s}

if [ "${1:-}" = soak ]; then
  FERRY_SOAK=1 swift test --filter 'ChangesSuites.RaceTests'
  exit
fi

if [ "${1:-}" != http ]; then
echo "== 1. plan, server time and throughput ($ROWS rows, $CHANGES changes; debug build in-process) =="
FERRY_BENCH_ROWS=$ROWS FERRY_BENCH_CHANGES=$CHANGES swift test --filter 'ChangesSuites.CostTests' 2>&1 \
  | grep -E '^(cost:|  |[A-Z].*(Scan|Time|Result|Limit|Sort|Append|Subquery|Unique|CTE|WindowAgg|Aggregate|Nested|Hash|InitPlan|SubPlan))' || true
fi

echo "== 2. HTTP against a release ferry serve ($ROWS rows) =="
command -v wrk >/dev/null || { echo "wrk is not installed"; exit 1; }
swift build -c release --product ferry >/dev/null
BIN=$(swift build -c release --show-bin-path)/ferry
DB=changes_bench_$$
url_for() { python3 -c "import sys,urllib.parse as u; p=u.urlparse(sys.argv[1]); print(p._replace(path='/'+sys.argv[2]).geturl())" "$1" "$2"; }
OWNER=$(url_for "$FERRY_TEST_OWNER_URL" "$DB")
APP=$(url_for "$FERRY_TEST_APP_URL" "$DB")
psql -X -q "$FERRY_TEST_OWNER_URL" -c "CREATE DATABASE $DB"
SERVER_PID=
cleanup() {
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null || true
  psql -X -q "$FERRY_TEST_OWNER_URL" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" || true
}
trap cleanup EXIT
FERRY_DATABASE_MIGRATION_URL="$OWNER" FERRY_DATABASE_URL="$APP" "$BIN" migrate --dir examples/study/migrations >/dev/null
TOKEN=bench$(head -c 48 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' | head -c 40)
psql -X -q -v ON_ERROR_STOP=1 "$OWNER" >/dev/null <<SQL
SELECT ferry.create_user('other', 'other-password'), ferry.create_user('bench', 'bench-password');
INSERT INTO app.study_sets (creator_id, title)
  SELECT u.id, 'bulk ' || i FROM ferry.users u, generate_series(1, greatest(1, $ROWS / 100)) i WHERE u.name = 'other';
INSERT INTO app.terms (set_id, word, definition)
  SELECT s.id, 'word ' || i, 'a definition of some length for row ' || i
    FROM app.study_sets s, generate_series(1, 100) i;
INSERT INTO app.study_sets (id, creator_id, title)
  SELECT '00000000-0000-0000-0000-0000000000be', id, 'mine' FROM ferry.users WHERE name = 'bench';
SELECT ferry.issue_token(id, sha256(convert_to('$TOKEN', 'UTF8')), 3600) FROM ferry.users WHERE name = 'bench';
ANALYZE app.terms, app.study_sets;
SQL
FERRY_DATABASE_URL=$APP FERRY_DATABASE_MIGRATION_URL=$OWNER FERRY_LISTEN_PORT=$PORT \
FERRY_MEMCACHED_SERVERS=$FERRY_TEST_MEMCACHED FERRY_LOGGING_LEVEL=warning FERRY_TOMBSTONES_PURGE_INTERVAL_SECONDS=0 \
  "$BIN" serve &
SERVER_PID=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
# Follow the feed to the frontier (the first full sync reads past the other user's rows once).
CURSOR=
feed_to_frontier() {
  local body
  while :; do
    body=$(curl -sf -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT/v1/changes?limit=5000${CURSOR:+&since=$CURSOR}")
    CURSOR=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["cursor"])' <<<"$body")
    [ "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["has_more"])' <<<"$body")" = False ] && break
  done
}
feed_to_frontier
echo "-- throughput: $CHANGES new changes for the caller among $ROWS rows, limit=5000, curl"
psql -X -q -v ON_ERROR_STOP=1 "$OWNER" -c "
  INSERT INTO app.terms (set_id, word, definition)
  SELECT '00000000-0000-0000-0000-0000000000be', 'mine ' || i, 'definition ' || i FROM generate_series(1, $CHANGES) i" >/dev/null
XID=$(psql -X -tA "$OWNER" -c "SELECT max(_ferry_xid)::text FROM app.terms")
until [ "$(psql -X -tA "$OWNER" -c "SELECT pg_snapshot_xmin(pg_current_snapshot()) > '$XID'::xid8")" = t ]; do sleep 0.05; done
CURSOR=$(python3 - "$PORT" "$TOKEN" "$CURSOR" <<'PY'
import json, sys, time, urllib.request
port, token, cursor = sys.argv[1], sys.argv[2], sys.argv[3]
got = pages = 0
start = time.perf_counter()
while True:
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/changes?limit=5000&since={cursor}",
                                 headers={"Authorization": f"Bearer {token}"})
    page = json.load(urllib.request.urlopen(req))
    pages += 1
    got += len(page["changes"])
    cursor = page["cursor"]
    if not page["has_more"]:
        break
t = time.perf_counter() - start
print(f"delivered {got} changes in {pages} pages, {t:.3f} s including client JSON parsing = {got / t:.0f} rows/s", file=sys.stderr)
print(cursor)
PY
)
echo "-- 304 activity check (If-None-Match), 2 threads, 16 connections, $DURATION"
wrk -t2 -c16 -d"$DURATION" --latency -H "Authorization: Bearer $TOKEN" -H "If-None-Match: \"$CURSOR\"" \
  "http://127.0.0.1:$PORT/v1/changes?since=$CURSOR" | grep -E 'Latency|Req/Sec|requests in|Requests/sec|50%|99%|Non-2xx'
echo "-- empty page (200), same load"
wrk -t2 -c16 -d"$DURATION" --latency -H "Authorization: Bearer $TOKEN" \
  "http://127.0.0.1:$PORT/v1/changes?since=$CURSOR" | grep -E 'Latency|requests in|Requests/sec|50%|99%|Non-2xx'
echo "-- baseline: GET /v1/auth/me (token check only, one transaction), same load"
wrk -t2 -c16 -d"$DURATION" --latency -H "Authorization: Bearer $TOKEN" \
  "http://127.0.0.1:$PORT/v1/auth/me" | grep -E 'Latency|requests in|Requests/sec|50%|99%|Non-2xx'
echo "(server time of one empty poll: EXPLAIN ANALYZE in part 1)"
