#!/usr/bin/env bash
# Issue 22's memory per idle keep-alive connection: N connections (default
# 10,000) each answered one GET /healthz and then left open; the server's RSS
# growth divided by N, against the target of 16 KiB. Needs the dev services.
#
#   bench/idle-connections.sh            (CONNECTIONS=10000; FERRY_BIN=path skips the build)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
CONNECTIONS=${CONNECTIONS:-10000}
ulimit -n "$(ulimit -Hn)"  # client and server each hold one descriptor per connection
BIN=${FERRY_BIN:-}
if [ -z "$BIN" ]; then swift build -c release --product ferry >/dev/null; BIN=.build/release/ferry; fi
bash deploy/local.sh start >/dev/null
eval "$(bash deploy/local.sh env)"
DB=ferry_bench_idle
OWNER_BASE=${FERRY_DATABASE_MIGRATION_URL%/*}
APP_BASE=${FERRY_DATABASE_URL%/*}
psql -X -q "$OWNER_BASE/postgres" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB"
export FERRY_DATABASE_MIGRATION_URL="$OWNER_BASE/$DB" FERRY_DATABASE_URL="$APP_BASE/$DB"
"$BIN" migrate >/dev/null
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
FERRY_LISTEN_PORT=$PORT FERRY_LOGGING_LEVEL=warning FERRY_LIMITS_MAX_CONNECTIONS=$((CONNECTIONS + 1000)) \
  FERRY_LIMITS_IDLE_TIMEOUT_SECONDS=600 "$BIN" serve &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true; wait 2>/dev/null || true; psql -X -q "$OWNER_BASE/postgres" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true' EXIT
for _ in $(seq 100); do curl -fs "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
python3 bench/idle-connections.py "$PORT" "$SERVER" "$CONNECTIONS"
