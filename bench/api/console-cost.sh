#!/usr/bin/env bash
# bench/api/console-cost.sh: what serving the console (issue 38) costs the API.
#
#   bench/api/console-cost.sh [instructions|writes|all]     (default: all)
#
# instructions  Instructions per request in the ferry process (callgrind, through
#               `bench/api/api.sh instructions`), GET and PATCH by id, the same release
#               binary with the console on and off (console.enabled): off, the server
#               registers no console route and no refusal recorder, which is the
#               request path of the commit before the console. Rounds alternate.
# writes        PostgreSQL's side: the sync triggers now stamp each row's last writer
#               (migration 0018). pgbench replays a request's write transaction
#               (set ferry.user_id, then UPDATE one term by id; and INSERT one term)
#               against the same table with the stamping trigger functions and with
#               the same functions minus that one line, alternating rounds.
#
# Environment: the services of deploy/local.sh (FERRY_PG_PORT, FERRY_MC_PORT), or
# FERRY_BENCH_OWNER_URL (a server URL without a database); BENCH_FERRY_BIN (a release
# binary; default: a release build), BENCH_ROUNDS (default 3), BENCH_SECONDS (pgbench
# seconds per round, default 10), BENCH_CLIENTS (pgbench clients, default 4).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
MODE=${1:-all}
ROUNDS=${BENCH_ROUNDS:-3}
SECONDS_PER_ROUND=${BENCH_SECONDS:-10}
CLIENTS=${BENCH_CLIENTS:-4}
PG_PORT=${FERRY_PG_PORT:-54329}
OWNER=${FERRY_BENCH_OWNER_URL:-postgresql://ferry_owner:ferry_owner@127.0.0.1:$PG_PORT}
DB=ferry_bench_console_$$
WORK=$(mktemp -d /tmp/ferry-console-cost.XXXXXX)
cleanup() {
  psql -X -q "$OWNER/postgres" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

instructions() {
  local bin=${BENCH_FERRY_BIN:-}
  if [ -z "$bin" ]; then (cd "$ROOT" && swift build -c release --product ferry >&2); bin=$ROOT/.build/release/ferry; fi
  echo "## instructions per request in the ferry process (callgrind), console off and on, $ROUNDS rounds"
  echo "| round | console | op | requests | instructions per request |"
  echo "|---|---|---|---|---|"
  for round in $(seq 1 "$ROUNDS"); do
    for enabled in false true; do
      FERRY_CONSOLE_ENABLED=$enabled BENCH_FERRY_BIN=$bin BENCH_INSTRUCTIONS_OPS="get patch" BENCH_NO_CALIBRATION=1 \
        bash "$ROOT/bench/api/api.sh" instructions 2>/dev/null | grep '^| \(get\|patch\) ' \
        | awk -v r="$round" -v e="$( [ $enabled = true ] && echo on || echo off)" -F'|' '{gsub(/ /, "", $2); printf "| %s | %s | %s |%s|%s|\n", r, e, $2, $3, $4}'
    done
  done
}

writes() {
  psql -X -q -v ON_ERROR_STOP=1 "$OWNER/postgres" -c "CREATE DATABASE $DB" >/dev/null
  FERRY_DATABASE_MIGRATION_URL="$OWNER/$DB" "${BENCH_FERRY_BIN:-$ROOT/.build/release/ferry}" migrate --dir "$ROOT/examples/study/migrations" >/dev/null
  psql -X -q -v ON_ERROR_STOP=1 "$OWNER/$DB" >/dev/null <<'SQL'
SELECT ferry.create_user('bench', 'bench-password');
INSERT INTO app.study_sets (id, creator_id, title)
SELECT '00000000-0000-0000-0000-000000000001', id, 'bench' FROM ferry.users WHERE name = 'bench';
CREATE TABLE public.bench_ids (n int PRIMARY KEY, id uuid NOT NULL);
WITH t AS (INSERT INTO app.terms (set_id, word, definition)
           SELECT '00000000-0000-0000-0000-000000000001', 'w' || i, 'd' || i FROM generate_series(1, 10000) i RETURNING id)
INSERT INTO public.bench_ids SELECT row_number() OVER (), id FROM t;
-- The two variants of each trigger function: as migrated (stamping the writer) and without that line.
CREATE TABLE public.bench_variants (name text, stamped text, unstamped text);
INSERT INTO public.bench_variants
SELECT p.proname, p.prosrc, replace(p.prosrc, 'NEW._ferry_writer := ferry.current_user_id();', '')
  FROM pg_proc p WHERE p.pronamespace = 'ferry'::regnamespace
   AND p.proname IN ('sync_before_insert', 'sync_update_' || 'app.terms'::regclass::oid);
VACUUM ANALYZE app.terms;
VACUUM ANALYZE public.bench_ids;
SQL
  [ "$(psql -X -qtA "$OWNER/$DB" -c "SELECT count(*) FROM public.bench_variants WHERE stamped <> unstamped")" = 2 ] \
    || { echo "writes: the trigger functions do not carry the writer line" >&2; exit 1; }
  local user
  user=$(psql -X -qtA "$OWNER/$DB" -c "SELECT id FROM ferry.users WHERE name = 'bench'")
  cat >"$WORK/update.sql" <<SQL
\set n random(1, 10000)
BEGIN;
SELECT set_config('ferry.user_id', '$user', true);
UPDATE app.terms SET definition = md5(random()::text) WHERE id = (SELECT id FROM public.bench_ids WHERE n = :n);
COMMIT;
SQL
  cat >"$WORK/insert.sql" <<SQL
BEGIN;
SELECT set_config('ferry.user_id', '$user', true);
INSERT INTO app.terms (set_id, word) VALUES ('00000000-0000-0000-0000-000000000001', 'x');
COMMIT;
SQL
  variant() {
    psql -X -q -v ON_ERROR_STOP=1 "$OWNER/$DB" -c "
      DO \$\$ DECLARE v record; BEGIN
        FOR v IN SELECT * FROM public.bench_variants LOOP
          EXECUTE format('CREATE OR REPLACE FUNCTION ferry.%I() RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog, ferry, pg_temp AS %L',
                         v.name, CASE WHEN '$1' = 'stamped' THEN v.stamped ELSE v.unstamped END);
        END LOOP; END \$\$" >/dev/null
  }
  echo "## PostgreSQL: write transactions per second, with and without the last-writer stamp ($CLIENTS clients, ${SECONDS_PER_ROUND} s rounds)"
  echo "| round | write | without the stamp (tps) | with it (tps) | with ÷ without |"
  echo "|---|---|---|---|---|"
  for round in $(seq 1 "$ROUNDS"); do
    for script in update insert; do
      declare -A tps=()
      for which in unstamped stamped; do
        variant "$which"
        tps[$which]=$(pgbench -n -M prepared -c "$CLIENTS" -j 2 -T "$SECONDS_PER_ROUND" -f "$WORK/$script.sql" "$OWNER/$DB" 2>/dev/null \
          | awk '/^tps/ {printf "%.0f", $3}')
      done
      echo "| $round | $script | ${tps[unstamped]} | ${tps[stamped]} | $(awk -v a="${tps[stamped]}" -v b="${tps[unstamped]}" 'BEGIN {printf "%.3f", a / b}') |"
    done
  done
  variant stamped
}

case "$MODE" in
  instructions) instructions ;;
  writes) writes ;;
  all) instructions; writes ;;
  *) echo "usage: $0 [instructions|writes|all]" >&2; exit 2 ;;
esac
