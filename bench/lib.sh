# bench/lib.sh: what the single-purpose bench scripts share (slowloris,
# idle-connections, first-sync, gzip-levels, web, live, public-poll,
# subscribe-set, feed-hold). Source it from the repository
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
#                           and SERVER (and BASE, its URL), waits for /healthz;
#                           stopped on exit
#   bench_seed_public [psql args]
#                           into the scratch database of examples/study: users
#                           `creator` and `device` (password `bench`), then the
#                           SQL on stdin as its owner (the args pass -v
#                           variables), then ANALYZE of its sets and terms
#   bench_users NAME ...    users NAME ... (password bench-password), added
#                           with `ferry user add`; sets a variable named after
#                           each, upper-cased (WRITER, READER, ...), to a token of it
#   bench_api METHOD PATH TOKEN [JSON]
#                           curl of the server at PATH as TOKEN's user; fails on
#                           an error status
#   bench_shared_set TITLE  after bench_users writer reader and bench_serve: sets
#                           SET, the writer's study set TITLE, with the reader
#                           its collaborator, and READER_ID
#   bench_token USER PASSWORD
#                           sets TOKEN: a bearer token of USER from the server
#   bench_await_feed QUERY PATTERN
#                           waits (a minute at most) until TOKEN's
#                           /v1/changes?QUERY answers with PATTERN (grep -E): a
#                           seed is in the feed once every older transaction ended
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
  BASE=http://127.0.0.1:$PORT
  # BENCH_SERVE_TRIES: tenths of a second to wait (a server under valgrind takes longer).
  for _ in $(seq 1 "${BENCH_SERVE_TRIES:-100}"); do curl -fs -o /dev/null "http://127.0.0.1:$PORT/healthz" && return 0; sleep 0.1; done
  echo "ferry serve did not answer on port $PORT" >&2
  return 1
}

bench_users() {
  local user
  for user in "$@"; do
    echo "bench-password" | "$BIN" user add "$user" >/dev/null
    printf -v "${user^^}" '%s' "$("$BIN" token issue "$user" | tail -n1)"
  done
}

bench_api() {
  curl -fsS -X "$1" "http://127.0.0.1:$PORT$2" -H "Authorization: Bearer $3" -H 'Content-Type: application/json' ${4:+-d "$4"}
}

bench_shared_set() {
  local id='import json,sys; print(json.load(sys.stdin)["id"])'
  READER_ID=$(bench_api GET /v1/auth/me "$READER" | python3 -c "$id")
  SET=$(bench_api POST /v1/study_sets "$WRITER" "{\"title\":\"$1\"}" | python3 -c "$id")
  bench_api POST /v1/set_collaborators "$WRITER" "{\"set_id\":\"$SET\",\"user_id\":\"$READER_ID\"}" >/dev/null
}

bench_seed_public() {
  { echo "SELECT ferry.create_user('creator', 'bench'), ferry.create_user('device', 'bench');"
    cat
    echo "ANALYZE app.study_sets; ANALYZE app.terms;"
  } | psql -X -q -v ON_ERROR_STOP=1 "$@" "$FERRY_DATABASE_MIGRATION_URL" >/dev/null
}

bench_token() {
  TOKEN=$(curl -sf -X POST -u "$1:$2" "$BASE/v1/auth/token" | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')
}

bench_await_feed() {
  for _ in $(seq 600); do
    curl -sf "$BASE/v1/changes?$1" -H "Authorization: Bearer $TOKEN" | grep -qE "$2" && return 0
    sleep 0.1
  done
  echo "the seed was not in /v1/changes?$1 after a minute" >&2
  return 1
}

bench_cleanup() {
  bench_stop
  if [ -n "$BENCH_DB" ]; then psql -X -q "$BENCH_OWNER_BASE/postgres" -c "DROP DATABASE IF EXISTS $BENCH_DB WITH (FORCE)" >/dev/null 2>&1 || true; fi
}
trap bench_cleanup EXIT
