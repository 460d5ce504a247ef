# bench/lib.sh: what the single-purpose bench scripts share (slowloris,
# idle-connections, first-sync, gzip-levels, web). Source it from the repository
# root after `set -euo pipefail`; it starts the dev services.
#
#   bench_binary            sets BIN: $FERRY_BIN, or a fresh release build
#   bench_database NAME [DIR]
#                           a scratch database NAME, migrated with DIR (default
#                           examples/study/migrations); exports the
#                           FERRY_DATABASE_*URL for it; dropped on exit
#   bench_serve [VAR=value ...]
#                           starts `$BIN serve` on a free port with the given
#                           settings (after any earlier one stops), sets PORT
#                           and SERVER, waits for /healthz; stopped on exit
bash deploy/local.sh start >/dev/null
eval "$(bash deploy/local.sh env)"
BENCH_OWNER_BASE=${FERRY_DATABASE_MIGRATION_URL%/*}
BENCH_APP_BASE=${FERRY_DATABASE_URL%/*}
BENCH_DB=
SERVER=
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

bench_binary() {
  BIN=${FERRY_BIN:-}
  if [ -z "$BIN" ]; then swift build -c release --product ferry >/dev/null; BIN=.build/release/ferry; fi
}

bench_database() {
  BENCH_DB=$1
  psql -X -q "$BENCH_OWNER_BASE/postgres" -c "DROP DATABASE IF EXISTS $BENCH_DB WITH (FORCE)" -c "CREATE DATABASE $BENCH_DB" 2>/dev/null
  export FERRY_DATABASE_MIGRATION_URL="$BENCH_OWNER_BASE/$BENCH_DB" FERRY_DATABASE_URL="$BENCH_APP_BASE/$BENCH_DB"
  "$BIN" migrate --dir "${2:-examples/study/migrations}" >/dev/null
}

bench_stop() {
  if [ -n "$SERVER" ]; then kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; fi
  SERVER=
}

bench_serve() {
  bench_stop
  env FERRY_LISTEN_PORT="$PORT" FERRY_LOGGING_LEVEL=warning "$@" "$BIN" serve >/dev/null 2>&1 &
  SERVER=$!
  for _ in $(seq 1 100); do curl -fs -o /dev/null "http://127.0.0.1:$PORT/healthz" && return 0; sleep 0.1; done
  echo "ferry serve did not answer on port $PORT" >&2
  return 1
}

bench_cleanup() {
  bench_stop
  if [ -n "$BENCH_DB" ]; then psql -X -q "$BENCH_OWNER_BASE/postgres" -c "DROP DATABASE IF EXISTS $BENCH_DB WITH (FORCE)" >/dev/null 2>&1 || true; fi
}
trap bench_cleanup EXIT
