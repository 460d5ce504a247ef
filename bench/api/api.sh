#!/usr/bin/env bash
# bench/api/api.sh: Ferry's resource API under wrk, beside Kinto 26 on the same PostgreSQL.
#
#   bench/api/api.sh [ferry|kinto|all]      (default: all)
#   bench/api/api.sh instructions           (callgrind: instructions per request, see bench_instructions)
#   bench/api/api.sh targets                (issue 4's targets, both readings, in rounds; see bench_targets)
#   bench/api/api.sh trip-files             (the source files one GET and one PATCH run code in; see bench_trip_files)
#
# Seeds the example schema with 100,000 terms across 1,000 sets (one user),
# starts a release build of Ferry, and measures with wrk and the Lua scripts
# in bench/api/wrk/:
#   get     GET one term by id
#   304     the same GET with a matching If-None-Match
#   patch   PATCH one term (If-Match: *)
#   put     PUT one term, every client field (If-Match: *)
#   post100 POST 100 new terms in one request
#   index   GET the 100 terms of one set
# Then the same operations against Kinto (gunicorn, 2 workers x 4 threads,
# basicauth, PostgreSQL storage) when BENCH_KINTO_VENV points at a virtualenv
# with `pip install 'kinto[postgresql]' gunicorn` (Kinto is not part of this
# repository). Prints a Markdown table.
#
# Environment: FERRY_BENCH_OWNER_URL / FERRY_BENCH_APP_URL (server URLs without a
# database; default: the development services of deploy/local.sh, reached through
# PostgreSQL's Unix socket as a same-host deployment would; BENCH_PG_TCP=1 for
# 127.0.0.1 instead; pgbench's yardstick, Ferry and Kinto all use the same), BENCH_DURATION
# (default 10s), BENCH_WARMUP (unrecorded GETs before each server's runs, default 3s),
# BENCH_CONNECTIONS (default 32), BENCH_THREADS (default 2), BENCH_TIMEOUT
# (default 30s), BENCH_FERRY_BIN (a release binary to use instead of building one),
# BENCH_NO_CALIBRATION (skip the pgbench -S yardstick run);
# FERRY_* variables reach the server (e.g. FERRY_DATABASE_PREPARED_STATEMENTS); the scratch
# databases are dropped at the end unless BENCH_KEEP is set.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
MODE=${1:-all}
DB=${BENCH_DATABASE:-ferry_bench_api}
KDB=${BENCH_KINTO_DATABASE:-ferry_bench_kinto}
PG_PORT=${FERRY_PG_PORT:-54329}
PG_SOCKET_DIR=${FERRY_LOCAL_DIR:-$ROOT/.local}/run
if [ -n "${BENCH_PG_TCP:-}" ]; then
  PG_HOST=127.0.0.1
  KINTO_PG="postgresql://ferry_owner:ferry_owner@127.0.0.1:$PG_PORT/$KDB"
else
  # A socket directory goes in a URL's host part percent-encoded (libpq decodes it).
  PG_HOST=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$PG_SOCKET_DIR")
  # SQLAlchemy (Kinto) does not decode the host part, and its ini file would read "%" as
  # interpolation: the directory goes in as a parameter.
  KINTO_PG="postgresql://ferry_owner:ferry_owner@/$KDB?host=$PG_SOCKET_DIR&port=$PG_PORT"
fi
OWNER=${FERRY_BENCH_OWNER_URL:-postgresql://ferry_owner:ferry_owner@$PG_HOST:$PG_PORT}
APP=${FERRY_BENCH_APP_URL:-postgresql://ferry_app:ferry_app@$PG_HOST:$PG_PORT}
[ -z "${FERRY_BENCH_OWNER_URL:-}" ] || KINTO_PG="$OWNER/$KDB"
DURATION=${BENCH_DURATION:-10s}
CONNECTIONS=${BENCH_CONNECTIONS:-32}
THREADS=${BENCH_THREADS:-2}
# Kinto's Index and 100-item batch take seconds; wrk's default 2 s would count them as timeouts.
TIMEOUT=${BENCH_TIMEOUT:-30s}
PORT=${BENCH_PORT:-18480}
KPORT=${BENCH_KINTO_PORT:-18488}
WORK=$(mktemp -d /tmp/ferry-bench.XXXXXX)
export BENCH_LUA=$ROOT/bench/api/wrk BENCH_DIR=$WORK
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -n "${BENCH_KEEP:-}" ] || rm -rf "$WORK"
  if [ -z "${BENCH_KEEP:-}" ]; then
    psql -X -q "$OWNER/postgres" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "DROP DATABASE IF EXISTS $KDB WITH (FORCE)" \
      -c "DROP DATABASE IF EXISTS ${DB}_pgbench WITH (FORCE)" \
      >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT

psql_owner() { psql -X -q -v ON_ERROR_STOP=1 "$OWNER/$1" "${@:2}"; }
wait_http() {
  for _ in $(seq 1 "${2:-100}"); do curl -fs -o /dev/null "$1" && return 0; sleep 0.2; done
  echo "nothing answers at $1" >&2
  return 1
}
# User + system CPU ticks of the given processes (all their threads), those still alive.
cpu_ticks() {
  local total=0 pid
  for pid in "$@"; do
    [ -r "/proc/$pid/stat" ] || continue
    total=$((total + $(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo 0)))
  done
  echo "$total"
}
# per_request BEFORE AFTER REQUESTS -> CPU microseconds per request
per_request() {
  awk -v a="$1" -v b="$2" -v n="$3" -v hz="$(getconf CLK_TCK)" 'BEGIN { if (n > 0) printf "%.0f", (b - a) / hz * 1e6 / n; else print "-" }'
}
# wrk_run NAME SCRIPT SERVER -> appends "NAME req/s p50 p99 cpu" to $WORK/results.SERVER; wrk's output to stderr.
# cpu is "<server>+<postgres>": CPU microseconds per request of the server's processes
# (SERVER_PIDS) and of every postgres process. Throughput here moves with the
# neighbours; CPU per request much less, so it is the figure to compare between builds.
wrk_run() {
  local name=$1 script=$2 out pg_pids s0 p0 s1 p1 requests
  pg_pids=$(pgrep -x postgres || true)
  # shellcheck disable=SC2086
  s0=$(cpu_ticks "${SERVER_PIDS[@]}"); p0=$(cpu_ticks $pg_pids)
  out=$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --timeout "$TIMEOUT" --latency -s "$ROOT/bench/api/wrk/$script" "$BASE")
  # shellcheck disable=SC2086
  s1=$(cpu_ticks "${SERVER_PIDS[@]}"); p1=$(cpu_ticks $pg_pids)
  requests=$(echo "$out" | awk '/requests in/ {print $1}')
  echo "$out" >&2
  if echo "$out" | grep -q "Non-2xx or 3xx"; then echo "WARNING: $3 $name had error responses" >&2; fi
  if echo "$out" | grep -q "Socket errors"; then echo "WARNING: $3 $name had socket errors or timeouts" >&2; fi
  # Error answers count in wrk's req/s, so the table flags them instead of hiding them.
  local rate errors
  rate=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
  errors=$(echo "$out" | awk '/Non-2xx or 3xx/ {print $NF}')
  [ -z "$errors" ] || rate="$rate(${errors}_errors)"
  echo "$name $rate $(echo "$out" | awk '/ 50%/ {print $2}') $(echo "$out" | awk '/ 99%/ {print $2}')" \
    "$(per_request "$s0" "$s1" "$requests")+$(per_request "$p0" "$p1" "$requests")" >> "$WORK/results.$3"
}

# A few seconds of unrecorded GETs first: otherwise the first measured operation
# also pays for a cold start (the fresh table's pages, every pool connection's
# first prepare of each statement).
warm_up() {
  BENCH_PATH_PREFIX=$1 wrk -t"$THREADS" -c"$CONNECTIONS" -d"${BENCH_WARMUP:-3s}" --timeout "$TIMEOUT" \
    -s "$ROOT/bench/api/wrk/get.lua" "$BASE" >/dev/null
}

# Migrates with the binary under test ($1), as a deployment does: Ferry's own files, its
# repeatable functions, the refresh of what it generates, then the study app's (or those of
# the directory $2, such as a copy of them without their newest file); or, given $3, with
# psql from that directory.
seed_ferry() {
  psql_owner postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB"
  if [ -n "${3:-}" ]; then
    # A build from before `ferry migrate` carried Ferry's own track (55769a3, 27 Nov): its
    # migrations/*.sql (Ferry's and the study app's together), each in one transaction.
    local f
    for f in "$3"/*.sql; do psql_owner "$DB" -1 -f "$f" >/dev/null; done
  else
    FERRY_DATABASE_MIGRATION_URL="$OWNER/$DB" FERRY_DATABASE_URL="$APP/$DB" \
      "$1" migrate --dir "${2:-$ROOT/examples/study/migrations}" >/dev/null
  fi
  USER_ID=$(psql_owner "$DB" -At -c "SELECT ferry.create_user('bench', 'bench-password')")
  TOKEN=$(head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')
  HASH=$(printf %s "$TOKEN" | sha256sum | cut -d' ' -f1)
  psql_owner "$DB" -c "SELECT ferry.issue_token('$USER_ID', '\\x$HASH'::bytea, 86400)" >/dev/null
  psql_owner "$DB" >/dev/null <<SQL
INSERT INTO app.study_sets (creator_id, title) SELECT '$USER_ID', 'set ' || g FROM generate_series(1, 1000) g;
INSERT INTO app.terms (set_id, word, definition, rank)
  SELECT s.id, 'word ' || g, 'definition of word ' || g, lpad(g::text, 4, '0') || 'V'
    FROM app.study_sets s, generate_series(1, 100) g;
-- What autovacuum does soon after a bulk load; without it the first run pays for hint bits.
VACUUM ANALYZE app.study_sets; VACUUM ANALYZE app.terms;
SQL
  psql_owner "$DB" -At -c "SELECT id FROM app.terms ORDER BY random() LIMIT 10000" > "$WORK/ids.txt"
  psql_owner "$DB" -At -c "SELECT id FROM app.study_sets" > "$WORK/sets.txt"
}

# serve_ferry BIN PORT LOG: `BIN serve` of $DB on PORT in the background, its pid in SERVED_PID
# (and PIDS, for cleanup).
serve_ferry() {
  FERRY_DATABASE_URL="$APP/$DB" FERRY_LISTEN_PORT=$2 FERRY_LISTEN_HOST=127.0.0.1 \
    FERRY_MEMCACHED_SERVERS=${FERRY_MEMCACHED_SERVERS:-127.0.0.1:11299} \
    FERRY_DATABASE_POOL_SIZE=${FERRY_DATABASE_POOL_SIZE:-$((2 * $(nproc)))} \
    FERRY_LISTEN_WORKER_THREADS=${FERRY_LISTEN_WORKER_THREADS:-$((2 * $(nproc)))} \
    "$1" serve >"$3" 2>&1 &
  SERVED_PID=$!
  PIDS+=("$SERVED_PID")
}

# Builds (unless BENCH_FERRY_BIN), seeds and starts Ferry, then warms it up.
start_ferry() {
  local bin=${BENCH_FERRY_BIN:-}
  if [ -z "$bin" ]; then (cd "$ROOT" && swift build -c release --product ferry >&2); bin=$ROOT/.build/release/ferry; fi
  seed_ferry "$bin"
  # Pool and workers at 2 x this machine's cores (the PostgreSQL wiki's sizing rule): on
  # 2 cores the 16-connection / 32-worker defaults measured 15-30 % fewer GETs with ~10x the
  # p99, the threads preempting each other. Override with the FERRY_* variables.
  # Index pages of sets that outgrow one page (after POST 100) take a paging snapshot in
  # memcached: the dev one of deploy/local.sh by default.
  serve_ferry "$bin" "$PORT" "$WORK/ferry.log"
  SERVER_PIDS=("$SERVED_PID")
  BASE=http://127.0.0.1:$PORT
  wait_http "$BASE/healthz"
  export BENCH_AUTH="Bearer $TOKEN" BENCH_KINTO=0
  warm_up /v1/terms/
}

bench_ferry() {
  start_ferry
  BENCH_PATH_PREFIX=/v1/terms/ wrk_run get get.lua ferry
  BENCH_PATH_PREFIX=/v1/terms/ BENCH_IF_NONE_MATCH='"1"' wrk_run 304 get.lua ferry
  BENCH_PATH_PREFIX=/v1/terms/ BENCH_METHOD=PATCH wrk_run patch write.lua ferry
  BENCH_PATH_PREFIX=/v1/terms/ BENCH_METHOD=PUT wrk_run put write.lua ferry
  BENCH_PATH=/v1/terms wrk_run post100 post100.lua ferry
  BENCH_PATH="/v1/terms?limit=100&set_id=" wrk_run index index.lua ferry
}

# Starts Kinto on the same data as seed_ferry's (see bench_kinto), warmed up; sets
# BASE, SERVER_PIDS, KINTO_PREFIX and KINTO_ETAG (one record's) and exports BENCH_AUTH.
start_kinto() {
  local venv=${BENCH_KINTO_VENV:?set BENCH_KINTO_VENV to a virtualenv with kinto[postgresql] and gunicorn}
  psql_owner postgres -c "DROP DATABASE IF EXISTS $KDB WITH (FORCE)" -c "CREATE DATABASE $KDB"
  cat > "$WORK/kinto.ini" <<INI
[app:main]
use = egg:kinto
kinto.storage_backend = kinto.core.storage.postgresql
kinto.storage_url = $KINTO_PG
kinto.permission_backend = kinto.core.permission.postgresql
kinto.permission_url = $KINTO_PG
kinto.cache_backend = kinto.core.cache.memory
kinto.userid_hmac_secret = bench-secret
multiauth.policies = basicauth
kinto.bucket_create_principals = system.Authenticated
kinto.batch_max_requests = 1000
kinto.paginate_by = 100
[server:main]
use = egg:waitress#main
host = 127.0.0.1
port = $KPORT
INI
  "$venv/bin/kinto" migrate --ini "$WORK/kinto.ini" >/dev/null 2>&1
  # Started directly (no subshell), so that cleanup's kill reaches gunicorn's master.
  "$venv/bin/gunicorn" --chdir "$WORK" --paste "$WORK/kinto.ini" -w 2 --threads 4 -b 127.0.0.1:$KPORT \
    >"$WORK/kinto.log" 2>&1 &
  PIDS+=($!)
  BASE=http://127.0.0.1:$KPORT
  wait_http "$BASE/v1/"
  # The master and its workers.
  SERVER_PIDS=("${PIDS[-1]}" $(pgrep -P "${PIDS[-1]}" || true))
  local auth="Basic $(printf 'bench:bench' | base64)"
  curl -fs -X PUT -H "Authorization: $auth" "$BASE/v1/buckets/bench" >/dev/null
  curl -fs -X PUT -H "Authorization: $auth" "$BASE/v1/buckets/bench/collections/terms" >/dev/null
  # The same data: 1,000 sets of 100 terms. Kinto's batch endpoint takes ~15
  # minutes for 100,000 records here, so they go straight into its storage
  # table (the rows Kinto itself writes: data without id and last_modified;
  # bump_timestamp keeps the explicit, distinct timestamps).
  psql_owner "$KDB" >/dev/null <<SQL
CREATE TEMP TABLE s AS SELECT gen_random_uuid()::text AS set_id FROM generate_series(1, 1000);
INSERT INTO objects (id, parent_id, resource_name, last_modified, data, deleted)
  SELECT gen_random_uuid()::text, '/buckets/bench/collections/terms', 'record',
         from_epoch(as_epoch(clock_timestamp()::timestamp) - 200000 + row_number() OVER ()),
         jsonb_build_object('set_id', s.set_id, 'word', 'word ' || g, 'definition', 'definition of word ' || g,
                            'rank', lpad(g::text, 4, '0') || 'V'), false
    FROM s, generate_series(1, 100) g;
VACUUM ANALYZE objects;
SQL
  psql_owner "$KDB" -At -c "SELECT id FROM objects WHERE resource_name = 'record' ORDER BY random() LIMIT 10000" > "$WORK/ids.txt"
  psql_owner "$KDB" -At -c "SELECT DISTINCT data->>'set_id' FROM objects WHERE resource_name = 'record'" > "$WORK/sets.txt"
  local etag
  etag=$(curl -fsI -H "Authorization: $auth" "$BASE/v1/buckets/bench/collections/terms/records/$(head -1 "$WORK/ids.txt")" \
    | awk -F': ' 'tolower($1)=="etag" {print $2}' | tr -d '\r')
  export BENCH_AUTH=$auth BENCH_KINTO=1
  KINTO_PREFIX=/v1/buckets/bench/collections/terms/records/
  KINTO_ETAG=$etag
  warm_up $KINTO_PREFIX
}

bench_kinto() {
  start_kinto
  local prefix=$KINTO_PREFIX etag=$KINTO_ETAG
  BENCH_PATH_PREFIX=$prefix wrk_run get get.lua kinto
  # Kinto's ETag is per record (its timestamp): the 304 run asks for one record.
  head -1 "$WORK/ids.txt" > "$WORK/one.txt"; cp "$WORK/ids.txt" "$WORK/all.txt"; cp "$WORK/one.txt" "$WORK/ids.txt"
  BENCH_PATH_PREFIX=$prefix BENCH_IF_NONE_MATCH=$etag wrk_run 304 get.lua kinto
  cp "$WORK/all.txt" "$WORK/ids.txt"
  BENCH_PATH_PREFIX=$prefix BENCH_METHOD=PATCH wrk_run patch write.lua kinto
  # Kinto's PUT replaces the whole record, set_id included: the few thousand
  # records it rewrites drop out of their set's Index (which scans the same
  # rows either way). Not after the Index: gunicorn is still busy with the
  # Index requests wrk gave up on, and measured PUT at a tenth of its speed.
  BENCH_PATH_PREFIX=$prefix BENCH_METHOD=PUT wrk_run put write.lua kinto
  BENCH_PATH=/v1/batch wrk_run post100 post100.lua kinto
  BENCH_PATH="${prefix%/}?_limit=100&set_id=" wrk_run index index.lua kinto
}

# wake_ups on|off: the live wake-ups of $DB (issue 47 item 4). Off: no hint made anywhere
# (bench/api/wake-ups-off.sql). On: live.sql applied again (its functions as `ferry migrate`
# makes them), every synced table's triggers and functions made again, the NOTIFY triggers
# enabled. Either way the serve process reloads its schema on the notice; a second lets it.
wake_ups() {
  if [ "$1" = off ]; then
    psql_owner "$DB" -1 -f "$ROOT/bench/api/wake-ups-off.sql"
  else
    psql_owner "$DB" -1 -c "SET client_min_messages = warning" -f "$ROOT/migrations/functions/live.sql" \
      -c "SELECT ferry.refresh_sync_triggers()" \
      -c "DO \$\$ DECLARE t record; BEGIN
            FOR t IN SELECT tg.tgrelid::regclass AS rel, tg.tgname FROM pg_trigger tg
                      WHERE tg.tgname LIKE 'zz_ferry_notify_%' AND NOT tg.tgisinternal LOOP
              EXECUTE format('ALTER TABLE %s ENABLE TRIGGER %I', t.rel, t.tgname);
            END LOOP; END \$\$"
  fi
  sleep 1
}

# hint_notifies: the NOTIFY transactions the server at $BASE has sent its hints in (/metrics).
hint_notifies() { curl -fsS "$BASE/metrics" | awk '$1 == "ferry_live_hint_notifies_total" {print $2; f = 1} END {if (!f) print 0}'; }

# Instructions per request in the ferry process, counted by callgrind: exact and
# repeatable, where throughput and CPU time on this machine move with the neighbours,
# so it is the figure to compare two builds' own work with. Each operation gets a
# fresh server under valgrind (pool 2, workers 2), 3 s of uncounted requests, then
# wrk -t1 -c4 for BENCH_INSTRUCTIONS_DURATION (default 10s) with counting on. `patch-off` is
# PATCH with the live wake-ups off (wake_ups, as bench/feed/notify-cost.sh turns them off);
# a PATCH's row also gives the NOTIFY transactions the hint sender made while counted.
# BENCH_PSQL_MIGRATIONS: a build from before Ferry's core track (27 Nov) is seeded with psql
# from that checkout's migrations/ (seed_ferry), its wake-ups left as its migrations make them.
bench_instructions() {
  command -v valgrind >/dev/null || { echo "instructions: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
  local bin=${BENCH_FERRY_BIN:-} op script pid requests total notifies
  if [ -z "$bin" ]; then (cd "$ROOT" && swift build -c release --product ferry >&2); bin=$ROOT/.build/release/ferry; fi
  seed_ferry "$bin" "" "${BENCH_PSQL_MIGRATIONS:-}"
  # valgrind cannot read the DWARF 5 the Swift toolchain writes: a copy without it, symbols kept.
  strip --strip-debug -o "$WORK/ferry-nodebug" "$bin"
  export BENCH_AUTH="Bearer $TOKEN" BENCH_KINTO=0 BENCH_PATH_PREFIX=/v1/terms/
  BASE=http://127.0.0.1:$PORT
  for op in ${BENCH_INSTRUCTIONS_OPS:-get 304 patch}; do
    script=get.lua; unset BENCH_IF_NONE_MATCH BENCH_METHOD
    case $op in
      304) export BENCH_IF_NONE_MATCH='"1"' ;;
      patch | patch-off) script=write.lua; export BENCH_METHOD=PATCH ;;
    esac
    # A build from before the wake-ups (BENCH_PSQL_MIGRATIONS) runs its own migrations as they are.
    if [ -n "${BENCH_PSQL_MIGRATIONS:-}" ]; then :; elif [ "$op" = patch-off ]; then wake_ups off >/dev/null; else wake_ups on >/dev/null; fi
    FERRY_DATABASE_URL="$APP/$DB" FERRY_LISTEN_PORT=$PORT FERRY_LISTEN_HOST=127.0.0.1 \
      FERRY_MEMCACHED_SERVERS=${FERRY_MEMCACHED_SERVERS:-127.0.0.1:11299} \
      FERRY_DATABASE_POOL_SIZE=2 FERRY_LISTEN_WORKER_THREADS=2 \
      valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$WORK/callgrind.$op" \
      "$WORK/ferry-nodebug" serve >"$WORK/ferry-$op.log" 2>&1 &
    pid=$!
    PIDS+=("$pid")
    # Under valgrind on a busy machine the start takes minutes.
    wait_http "$BASE/healthz" 3000
    wrk -t1 -c4 -d3s --timeout "$TIMEOUT" -s "$ROOT/bench/api/wrk/$script" "$BASE" >/dev/null
    notifies=$(hint_notifies)
    callgrind_control -i on "$pid" >/dev/null 2>&1
    requests=$(wrk -t1 -c4 -d"${BENCH_INSTRUCTIONS_DURATION:-10s}" --timeout "$TIMEOUT" -s "$ROOT/bench/api/wrk/$script" "$BASE" | awk '/requests in/ {print $1}')
    callgrind_control -i off "$pid" >/dev/null 2>&1
    notifies=$(( $(hint_notifies) - notifies ))
    kill -INT "$pid"; wait "$pid" 2>/dev/null || true
    total=$(callgrind_annotate "$WORK/callgrind.$op" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
    echo "| $op | $requests | $((total / requests)) |$([ "${op#patch}" = "$op" ] || echo " $notifies NOTIFYs |")"
  done
  [ -n "${BENCH_PSQL_MIGRATIONS:-}" ] || wake_ups on >/dev/null
  # For `callgrind_annotate --inclusive=yes <file>`, run with BENCH_KEEP=1.
  echo "callgrind files: $WORK/callgrind.{get,304,patch,patch-off}" >&2
}

# The machine's speed moves by 2x with its neighbours, so every run also measures the
# issue's yardstick, pgbench's primary-key select, in the same minutes.
CDB=${DB}_pgbench
# simple_update_tps: pgbench's simple-update at 8 clients for DURATION on the calibration
# database, as tps (the same-run bar a PATCH is set against: ratios.sh, notify-cost.sh, patch-ab.sh).
simple_update_tps() {
  pgbench -n -b simple-update -c 8 -j 2 -T "${DURATION%s}" "$OWNER/$CDB" 2>/dev/null | awk '/^tps/ {printf "%.0f", $3}'
}

calibration_setup() {
  psql_owner postgres -c "DROP DATABASE IF EXISTS $CDB WITH (FORCE)" -c "CREATE DATABASE $CDB"
  pgbench -q -i -s 10 "$OWNER/$CDB" >/dev/null 2>&1
}
# pgbench_tps SECONDS [THREADS] -> transactions per second of the yardstick, 8 clients on
# THREADS pgbench threads (default 2). The issue's own figure was `pgbench -S -M prepared`
# with 8 clients and no -j, so one thread: `targets` scales by that.
pgbench_tps() {
  pgbench -n -S -M prepared -c 8 -j "${2:-2}" -T "$1" "$OWNER/$CDB" 2>/dev/null | awk '/^tps/ {printf "%.0f", $3}'
}
calibration_drop() { psql_owner postgres -c "DROP DATABASE IF EXISTS $CDB WITH (FORCE)"; }
calibrate() {
  calibration_setup
  PGBENCH_TPS=$(pgbench_tps 10)
  calibration_drop
}

# The cpu line of /proc/stat: "<steal jiffies> <all jiffies>". On a VM, steal is the
# time the host gave this machine's CPUs to others.
cpu_steal() { awk '$1=="cpu" {t=0; for (i=2; i<=9; i++) t+=$i; print $9, t}' /proc/stat; }
# steal_percent "S0 T0" "S1 T1" -> the share of CPU time stolen in between.
steal_percent() {
  awk -v a="$1" -v b="$2" 'BEGIN { split(a, x, " "); split(b, y, " ")
    if (y[2] > x[2]) printf "%.0f", 100 * (y[1] - x[1]) / (y[2] - x[2]); else print "-" }'
}

# The issue's targets, checked against both readings of them: as written (10,000/s GET
# and 304, 2,000/s PATCH) and scaled by the yardstick they were set beside (pgbench -S
# at ~42,000 tps on this machine then: GET and 304 at 10,000/42,000 of it, PATCH at
# 2,000/42,000). The yardstick is run as the issue gives it, `pgbench -S -M prepared`
# with 8 clients and pgbench's default of one thread; the two-thread figure of the full
# runs is printed beside it. A single pgbench run ahead of the operations can land on a
# faster or slower minute than they do, so each round measures pgbench right before its
# own GET, 304 and PATCH: BENCH_ROUNDS rounds (default 3) of BENCH_DURATION each (whole
# seconds, default here 5s).
bench_targets() {
  local rounds=${BENCH_ROUNDS:-3} round tps tps2 get r304 patch cpu c0 c1 c2
  DURATION=${BENCH_DURATION:-5s}
  [[ $DURATION =~ ^[0-9]+s$ ]] || { echo "targets: BENCH_DURATION must be whole seconds, like 5s" >&2; exit 2; }
  calibration_setup
  start_ferry
  echo "| round | pgbench -S tps (1 thread, as the issue / 2 threads) | GET/s | 304/s | PATCH/s | GET ÷ pgbench | 304 ÷ pgbench | PATCH ÷ pgbench | CPU µs GET / 304 / PATCH (Ferry+PG) | steal % pgbench / Ferry |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  for round in $(seq 1 "$rounds"); do
    : > "$WORK/results.targets"
    c0=$(cpu_steal)
    tps=$(pgbench_tps "${DURATION%s}" 1)
    tps2=$(pgbench_tps "${DURATION%s}" 2)
    c1=$(cpu_steal)
    BENCH_PATH_PREFIX=/v1/terms/ wrk_run get get.lua targets 2>/dev/null
    BENCH_PATH_PREFIX=/v1/terms/ BENCH_IF_NONE_MATCH='"1"' wrk_run 304 get.lua targets 2>/dev/null
    BENCH_PATH_PREFIX=/v1/terms/ BENCH_METHOD=PATCH wrk_run patch write.lua targets 2>/dev/null
    c2=$(cpu_steal)
    # A missing figure is "-"; error answers leave a "(N_errors)" mark on the rate. Either
    # fails the round on both readings.
    get=$(awk '$1=="get" {print $2}' "$WORK/results.targets")
    r304=$(awk '$1=="304" {print $2}' "$WORK/results.targets")
    patch=$(awk '$1=="patch" {print $2}' "$WORK/results.targets")
    cpu=$(awk '{print $5}' "$WORK/results.targets" | paste -sd/ | sed 's|/| / |g')
    echo "$round ${tps:--} ${get:--} ${r304:--} ${patch:--}" >> "$WORK/rounds"
    awk -v r="$round" -v t="${tps:--}" -v t2="${tps2:--}" -v g="${get:--}" -v n="${r304:--}" -v p="${patch:--}" -v c="${cpu:--}" \
      -v st="$(steal_percent "$c0" "$c1") / $(steal_percent "$c1" "$c2")" '
      function ratio(v) { return (t + 0 > 0 && v ~ /^[0-9.]+$/) ? sprintf("%.3f", v / t) : "-" }
      BEGIN { printf "| %s | %s / %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r, t, t2, g, n, p, ratio(g), ratio(n), ratio(p), c, st }'
  done
  calibration_drop >/dev/null
  awk '
    function ok(v, min) { return v ~ /^[0-9.]+$/ && v + 0 >= min }
    { n++; w += ok($3, 10000) && ok($4, 10000) && ok($5, 2000)
      s += $2 + 0 > 0 && ok($3, $2 * 10000 / 42000) && ok($4, $2 * 10000 / 42000) && ok($5, $2 * 2000 / 42000) }
    END {
      printf "\nTargets as written (GET and 304 >= 10,000/s, PATCH >= 2,000/s): met in %d of %d rounds.\n", w, n
      printf "Targets scaled by pgbench -S as the issue ran it (GET and 304 >= 0.238, PATCH >= 0.048 of it): met in %d of %d rounds.\n", s, n
    }' "$WORK/rounds"
}
# bench/api/ratios.sh sources this file for its functions; only a direct run measures.
# The source files one request runs code in, measured rather than read off the
# code: a debug build (nothing inlined, so every function a request runs is a
# call) under callgrind, counting on for exactly one GET by id and then one
# PATCH, each on a kept-alive connection after warm-up, with the token cache off
# (every request checks its token). The executed functions' symbols are mapped to
# their files with llvm-symbolizer on the unstripped binary. Prints each file with
# the number of functions the request ran in it. docs/ARCHITECTURE.md cites it.
# BENCH_FERRY_DEBUG_BIN measures another debug build (an older commit's, say).
bench_trip_files() {
  command -v valgrind >/dev/null || { echo "trip-files: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
  local bin=${BENCH_FERRY_DEBUG_BIN:-} pid symbolizer nm
  if [ -z "$bin" ]; then (cd "$ROOT" && swift build --product ferry >&2); bin=$ROOT/.build/debug/ferry; fi
  symbolizer=$(command -v llvm-symbolizer || echo /opt/swift/usr/bin/llvm-symbolizer)
  nm=$(dirname "$(command -v swift)")/llvm-nm
  [ -x "$nm" ] || nm=nm
  seed_ferry "$bin"
  strip --strip-debug -o "$WORK/ferry-nodebug" "$bin"
  BASE=http://127.0.0.1:$PORT
  FERRY_DATABASE_URL="$APP/$DB" FERRY_LISTEN_PORT=$PORT FERRY_LISTEN_HOST=127.0.0.1 \
    FERRY_MEMCACHED_SERVERS=${FERRY_MEMCACHED_SERVERS:-127.0.0.1:11299} \
    FERRY_DATABASE_POOL_SIZE=2 FERRY_LISTEN_WORKER_THREADS=2 FERRY_AUTH_TOKEN_CACHE_SECONDS=0 \
    valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$WORK/trip.%p" \
    "$WORK/ferry-nodebug" serve >"$WORK/ferry-trip.log" 2>&1 &
  pid=$!
  PIDS+=("$pid")
  for _ in $(seq 1 600); do curl -fs -o /dev/null "$BASE/healthz" && break; sleep 0.5; done
  # One connection: two requests of each kind to warm the plan cache, then the
  # counted one. Counting is switched by callgrind_control between requests.
  python3 - "$PORT" "$TOKEN" "$(head -1 "$WORK/ids.txt")" "$pid" "$WORK" <<'PY'
import http.client, subprocess, sys
port, token, term, pid, work = sys.argv[1:]
conn = http.client.HTTPConnection("127.0.0.1", int(port), timeout=120)
auth = {"Authorization": "Bearer " + token}
def get():
    conn.request("GET", "/v1/terms/" + term, headers=auth)
    r = conn.getresponse(); r.read(); assert r.status == 200, r.status
def patch():
    conn.request("PATCH", "/v1/terms/" + term, body=b'{"word": "trip"}',
                 headers={**auth, "Content-Type": "application/json", "If-Match": "*"})
    r = conn.getresponse(); r.read(); assert r.status == 200, r.status
def counted(name, request):
    subprocess.run(["callgrind_control", "-z", pid], check=True, capture_output=True)
    subprocess.run(["callgrind_control", "-i", "on", pid], check=True, capture_output=True)
    request()
    subprocess.run(["callgrind_control", "-i", "off", pid], check=True, capture_output=True)
    subprocess.run(["callgrind_control", "-d", name, pid], check=True, capture_output=True)
for request in (get, get, patch, patch): request()
counted("get", get)
counted("patch", patch)
PY
  kill -INT "$pid"; wait "$pid" 2>/dev/null || true
  "$nm" --defined-only "$bin" | awk '{print $3, $1}' | LC_ALL=C sort -u -k1,1 > "$WORK/symbols"
  for op in get patch; do
    # Every function that ran (fn=) or was called (cfn=) while counting was on.
    grep -h -E '^c?fn=\([0-9]+\) ' "$(grep -l "^desc: Trigger: dump $op\$" "$WORK"/trip.*)" | sed -E 's/^c?fn=\([0-9]+\) //' | LC_ALL=C sort -u > "$WORK/ran.$op"
    LC_ALL=C join "$WORK/ran.$op" "$WORK/symbols" | awk '{print "0x" $2}' \
      | "$symbolizer" --obj="$bin" --functions=none 2>/dev/null | grep -o "^/.*/Sources/[^:]*" \
      | grep -v '/\.build/' | sed -E 's|^.*/(Sources/)|\1|' | sort | uniq -c | sort -k2 > "$WORK/files.$op"
    echo "## $op: $(wc -l < "$WORK/files.$op") source files (functions run in each)"
    cat "$WORK/files.$op"
  done
}

main() {
  if [ "$MODE" = targets ]; then
    bench_targets
    return 0
  fi
  if [ "$MODE" = trip-files ]; then
    bench_trip_files
    return 0
  fi
  if [ "$MODE" = instructions ]; then
    echo "| operation | requests counted | instructions per request (ferry process) |"
    echo "|---|---|---|"
    bench_instructions
    return 0
  fi

  PGBENCH_TPS=-
  [ -n "${BENCH_NO_CALIBRATION:-}" ] || calibrate

  case $MODE in
    ferry) bench_ferry ;;
    kinto) bench_kinto ;;
    all) bench_ferry; bench_kinto ;;
    *) echo "usage: $0 [ferry|kinto|all|instructions|targets|trip-files]" >&2; exit 2 ;;
  esac

  echo
  echo "pgbench -S -M prepared -c 8 -j 2 (same run): $PGBENCH_TPS tps; load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "PostgreSQL reached over: $([ -n "${BENCH_PG_TCP:-}" ] && echo "TCP 127.0.0.1" || echo "its Unix socket") (all three)"
  echo
  echo "CPU: microseconds of CPU per request, the server's processes + every postgres process."
  echo
  echo "| operation | Ferry req/s | Ferry p50 | Ferry p99 | Ferry CPU | Kinto req/s | Kinto p99 | Kinto CPU | ratio |"
  echo "|---|---|---|---|---|---|---|---|---|"
  for op in get 304 patch put post100 index; do
    fr='' fp50='' fp99='' fc='' kr='' kp99='' kc=''
    read -r _ fr fp50 fp99 fc < <(awk -v op=$op '$1==op' "$WORK/results.ferry" 2>/dev/null || true) || true
    read -r _ kr _ kp99 kc < <(awk -v op=$op '$1==op' "$WORK/results.kinto" 2>/dev/null || true) || true
    ratio=$(awk -v a="${fr%%(*}" -v b="${kr%%(*}" 'BEGIN { if (a > 0 && b > 0) printf "%.0fx", a / b; else print "-" }')
    echo "| $op | ${fr:--} | ${fp50:--} | ${fp99:--} | ${fc:--} | ${kr:--} | ${kp99:--} | ${kc:--} | $ratio |" \
      | sed 's/(\([0-9]*\)_errors)/ (\1 errors)/g'
  done
}
if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then main; fi
