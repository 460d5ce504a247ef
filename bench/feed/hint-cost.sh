#!/usr/bin/env bash
# bench/feed/hint-cost.sh: what the live hints' triggers cost one write in PostgreSQL
# (issue 47, "waking devices costs writers nothing").
#
#   bench/feed/hint-cost.sh
#
# pgbench replays a PATCH's transaction as Ferry sends it, as the serve role
# (its Row Level Security applies): set ferry.user_id and ferry.hint_mode
# 'collect', UPDATE one term by id, read ferry.hints back, commit. The same
# data in two databases, the notify triggers (zz_ferry_notify_*) enabled in
# one ("on") and disabled in the other ("off"), and one pgbench per database,
# all running at the same time: whatever else the machine does weighs on each
# alike, and with the CPUs busy each gets a like share of them, so the ratio
# of their transactions per second is the share of a write's throughput that
# the triggers leave. synchronous_commit is off, so a transaction is CPU work
# rather than a wait for the WAL flush.
#
# BENCH_BASELINE=<git revision>: also two databases from that revision's core
# migrations (the same app), measured in the same runs: "before" against
# "after" on the same seconds.
#
# BENCH_REACH=1: also two databases with the reach checks (core 0022's
# zz_ferry_reach_* triggers) disabled, one with the notify triggers on and one
# off: what the reach check adds to a PATCH that moves no row between scopes.
#
# Environment: the services of deploy/local.sh (FERRY_PG_PORT), or
# FERRY_BENCH_OWNER_URL (a server URL without a database); BENCH_ROUNDS
# (default 3), BENCH_SECONDS (seconds per run, default 10), BENCH_CLIENTS
# (pgbench clients per database, default 1).
set -euo pipefail
declare -A tps
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ROUNDS=${BENCH_ROUNDS:-3}
SECONDS_PER_RUN=${BENCH_SECONDS:-10}
CLIENTS=${BENCH_CLIENTS:-1}
PG_PORT=${FERRY_PG_PORT:-54329}
OWNER=${FERRY_BENCH_OWNER_URL:-postgresql://ferry_owner:ferry_owner@127.0.0.1:$PG_PORT}
DB=ferry_bench_hints_$$
WORK=$(mktemp -d /tmp/ferry-hint-cost.XXXXXX)
DATABASES=()
cleanup() {
  for db in "${DATABASES[@]}"; do
    psql -X -q "$OWNER/postgres" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
  done
  rm -rf "$WORK"
}
trap cleanup EXIT
owner() { psql -X -q -v ON_ERROR_STOP=1 "$OWNER/$1" "${@:2}"; }
. "$ROOT/bench/feed/tree-database.sh"

# make_databases NAME MIGRATIONS_DIR: NAME_on and NAME_off, each a tree_database of
# MIGRATIONS_DIR (tree-database.sh); NAME_off with the notify triggers of app.terms disabled.
make_databases() {
  local db=$1 dir=$2
  DATABASES+=("${db}_on" "${db}_off")
  tree_database "${db}_on" "$dir" hint-cost
  owner "${db}_on" >/dev/null <<'SQL'
VACUUM ANALYZE app.study_sets;
VACUUM ANALYZE app.terms;
VACUUM ANALYZE public.bench_ids;
SQL
  [ "$(owner "${db}_on" -tA -c "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'app.terms'::regclass AND tgname LIKE 'zz_ferry_notify_%' AND tgenabled = 'O'")" = 2 ] \
    || { echo "hint-cost: app.terms has no notify triggers" >&2; exit 1; }
  owner postgres -c "CREATE DATABASE ${db}_off TEMPLATE ${db}_on" >/dev/null
  owner "${db}_off" -c "ALTER TABLE app.terms DISABLE TRIGGER zz_ferry_notify_insert, DISABLE TRIGGER zz_ferry_notify_update" >/dev/null
}

make_databases "$DB" "$ROOT/migrations"
if [ -n "${BENCH_REACH:-}" ]; then
  for state in on off; do
    DATABASES+=("${DB}_${state}_noreach")
    owner postgres -c "CREATE DATABASE ${DB}_${state}_noreach TEMPLATE ${DB}_${state}" >/dev/null
    owner "${DB}_${state}_noreach" -c "ALTER TABLE app.terms DISABLE TRIGGER zz_ferry_reach_insert, DISABLE TRIGGER zz_ferry_reach_update" >/dev/null
  done
fi
if [ -n "${BENCH_BASELINE:-}" ]; then
  mkdir -p "$WORK/baseline"
  git -C "$ROOT" archive "$BENCH_BASELINE" migrations | tar -x -C "$WORK/baseline"
  make_databases "${DB}_baseline" "$WORK/baseline/migrations"
fi
# What one PATCH's transaction runs (PostgresGateway: the opening sets the
# user and the collect mode; the hints are read back before the commit), with
# each database's own user.
for db in "${DATABASES[@]}"; do
  user=$(owner "$db" -tA -c "SELECT id FROM ferry.users WHERE name = 'bench'")
  cat > "$WORK/$db.sql" <<SQL
\set r random(1, 1000)
BEGIN;
SET LOCAL synchronous_commit = off;
SELECT pg_catalog.set_config('ferry.user_id', '$user', true), pg_catalog.set_config('ferry.hint_mode', 'collect', true);
UPDATE app.terms SET definition = 'patched ' || :r || ' ' || random() WHERE id = (SELECT id FROM public.bench_ids WHERE n = :r);
SELECT pg_catalog.current_setting('ferry.hints', true);
COMMIT;
SQL
  # What it collects: the PATCH's hints on, none off; and the row written (RLS let the user).
  hints=$(psql -X -qtA -v ON_ERROR_STOP=1 "${OWNER/ferry_owner:ferry_owner/ferry_app:ferry_app}/$db" <<SQL
BEGIN;
SELECT pg_catalog.set_config('ferry.user_id', '$user', true), pg_catalog.set_config('ferry.hint_mode', 'collect', true) \g /dev/null
UPDATE app.terms SET definition = 'checked' WHERE id = (SELECT id FROM public.bench_ids WHERE n = 1) RETURNING 'one row written;';
SELECT replace(pg_catalog.current_setting('ferry.hints', true), E'\n', ' | ');
ROLLBACK;
SQL
)
  echo "$db: one PATCH: $(echo $hints)" >&2
done

echo "bench/feed/hint-cost.sh at $(git -C "$ROOT" rev-parse --short HEAD), $(date -u +%Y-%m-%dT%H:%MZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "One PATCH's transaction, pgbench -M prepared -c $CLIENTS per database, all databases at once, ${SECONDS_PER_RUN} s a round:"
echo
header="| round |" rule="|---|"
for db in "${DATABASES[@]}"; do header+=" ${db#"$DB"_} tps |"; rule+="---|"; done
header+=" on ÷ off |"; rule+="---|"
[ -z "${BENCH_BASELINE:-}" ] || { header+=" baseline on ÷ off | on ÷ baseline on |"; rule+="---|---|"; }
[ -z "${BENCH_REACH:-}" ] || { header+=" on ÷ on without reach | off without reach ÷ on |"; rule+="---|---|"; }
echo "$header"; echo "$rule"
for round in $(seq 1 "$ROUNDS"); do
  for db in "${DATABASES[@]}"; do
    pgbench -n -M prepared -c "$CLIENTS" -j "$CLIENTS" -T "$SECONDS_PER_RUN" -f "$WORK/$db.sql" \
      "${OWNER/ferry_owner:ferry_owner/ferry_app:ferry_app}/$db" > "$WORK/$db.out" 2>&1 &
  done
  wait
  line="| $round |"
  for db in "${DATABASES[@]}"; do
    grep -q "number of failed transactions: 0 " "$WORK/$db.out" || { echo "hint-cost: $db:" >&2; cat "$WORK/$db.out" >&2; }
    tps[$db]=$(awk '/^tps/ {printf "%.0f", $3}' "$WORK/$db.out")
    line+=" ${tps[$db]} |"
  done
  ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
  line+=" $(ratio "${tps[${DB}_on]}" "${tps[${DB}_off]}") |"
  [ -z "${BENCH_BASELINE:-}" ] || line+=" $(ratio "${tps[${DB}_baseline_on]}" "${tps[${DB}_baseline_off]}") | $(ratio "${tps[${DB}_on]}" "${tps[${DB}_baseline_on]}") |"
  [ -z "${BENCH_REACH:-}" ] || line+=" $(ratio "${tps[${DB}_on]}" "${tps[${DB}_on_noreach]}") | $(ratio "${tps[${DB}_off_noreach]}" "${tps[${DB}_on]}") |"
  echo "$line"
done
echo
echo "load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
