#!/usr/bin/env bash
# bench/rules/reach-cost.sh: what core 0022's reach check costs a write in PostgreSQL.
#
#   bench/rules/reach-cost.sh
#
# Every member table of an access scope has two statement triggers that re-read
# the statement's new rows under the writer's Row Level Security (a removed
# collaborator's write that waited for the revocation is refused; see
# docs/changes-feed.md, "Access changes"). pgbench replays a request's write
# transaction as the serve role, so the policies apply as they do for Ferry:
# set ferry.user_id, then INSERT one term into the user's set, or UPDATE one
# term by id; and a POST of 100 terms in one statement. Each runs with the
# reach triggers enabled and disabled on app.terms, alternating, in rounds.
#
# Environment: the services of deploy/local.sh (FERRY_PG_PORT), or
# FERRY_BENCH_OWNER_URL / FERRY_BENCH_APP_URL (server URLs without a database);
# BENCH_FERRY_BIN (a ferry binary for `migrate`; default: the release build),
# BENCH_ROUNDS (default 3), BENCH_SECONDS (pgbench seconds per run, default 10),
# BENCH_CLIENTS (pgbench clients, default 4).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ROUNDS=${BENCH_ROUNDS:-3}
SECONDS_PER_RUN=${BENCH_SECONDS:-10}
CLIENTS=${BENCH_CLIENTS:-4}
PG_PORT=${FERRY_PG_PORT:-54329}
OWNER=${FERRY_BENCH_OWNER_URL:-postgresql://ferry_owner:ferry_owner@127.0.0.1:$PG_PORT}
APP=${FERRY_BENCH_APP_URL:-postgresql://ferry_app:ferry_app@127.0.0.1:$PG_PORT}
DB=ferry_bench_reach_$$
WORK=$(mktemp -d /tmp/ferry-reach-cost.XXXXXX)
cleanup() {
  psql -X -q "$OWNER/postgres" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

psql -X -q -v ON_ERROR_STOP=1 "$OWNER/postgres" -c "CREATE DATABASE $DB" >/dev/null
FERRY_DATABASE_MIGRATION_URL="$OWNER/$DB" "${BENCH_FERRY_BIN:-$ROOT/.build/release/ferry}" migrate \
  --dir "$ROOT/examples/study/migrations" >/dev/null
psql -X -q -v ON_ERROR_STOP=1 "$OWNER/$DB" >/dev/null <<'SQL'
SELECT ferry.create_user('bench', 'bench-password');
-- The writer's own 1,000 sets of 100 terms, beside another user's as many:
-- the check reads through the writer's policies, at a realistic size.
SELECT ferry.create_user('other', 'other-password');
INSERT INTO app.study_sets (creator_id, title)
SELECT u.id, 'set ' || g FROM ferry.users u, generate_series(1, 1000) g WHERE u.name IN ('bench', 'other');
INSERT INTO app.terms (set_id, word, definition)
SELECT s.id, 'w' || g, 'd' || g FROM app.study_sets s, generate_series(1, 100) g;
CREATE TABLE public.bench_ids (n int PRIMARY KEY, id uuid NOT NULL, set_id uuid NOT NULL);
INSERT INTO public.bench_ids
SELECT row_number() OVER (), t.id, t.set_id FROM app.terms t JOIN app.study_sets s ON s.id = t.set_id
  JOIN ferry.users u ON u.id = s.creator_id WHERE u.name = 'bench' LIMIT 10000;
GRANT SELECT ON public.bench_ids TO ferry_app;
VACUUM ANALYZE app.study_sets;
VACUUM ANALYZE app.terms;
VACUUM ANALYZE public.bench_ids;
SQL
[ "$(psql -X -qtA "$OWNER/$DB" -c "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'app.terms'::regclass AND tgname LIKE 'zz_ferry_reach_%'")" = 2 ] \
  || { echo "reach-cost: app.terms has no reach check (core 0022 not applied?)" >&2; exit 1; }
user=$(psql -X -qtA "$OWNER/$DB" -c "SELECT id FROM ferry.users WHERE name = 'bench'")

# write_script NAME STATEMENT: one request's write transaction as the bench user, on a random term.
write_script() {
  printf '%s\n' '\set n random(1, 10000)' 'BEGIN;' "SELECT set_config('ferry.user_id', '$user', true);" "$2" 'COMMIT;' >"$WORK/$1.sql"
}
write_script insert "INSERT INTO app.terms (set_id, word) SELECT set_id, 'x' FROM public.bench_ids WHERE n = :n;"
write_script update "UPDATE app.terms SET definition = md5(random()::text) WHERE id = (SELECT id FROM public.bench_ids WHERE n = :n);"
write_script insert100 "INSERT INTO app.terms (set_id, word) SELECT b.set_id, 'x' || g FROM public.bench_ids b, generate_series(1, 100) g WHERE b.n = :n;"

reach() {
  psql -X -q -v ON_ERROR_STOP=1 "$OWNER/$DB" \
    -c "ALTER TABLE app.terms $1 TRIGGER zz_ferry_reach_insert" -c "ALTER TABLE app.terms $1 TRIGGER zz_ferry_reach_update" >/dev/null
}

echo "## PostgreSQL: write transactions per second as the serve role, with and without the reach check ($CLIENTS clients, ${SECONDS_PER_RUN} s runs)"
echo "| round | write | without the check (tps) | with it (tps) | with ÷ without |"
echo "|---|---|---|---|---|"
for round in $(seq 1 "$ROUNDS"); do
  for script in insert update insert100; do
    declare -A tps=()
    # Which goes first alternates: the inserts grow the table as the runs go.
    order="DISABLE ENABLE"; [ $((round % 2)) = 0 ] && order="ENABLE DISABLE"
    for which in $order; do
      reach "$which"
      pgbench -n -M prepared -c "$CLIENTS" -j 2 -T "$SECONDS_PER_RUN" -f "$WORK/$script.sql" "$APP/$DB" >"$WORK/run.out" 2>&1 || true
      # A refused write aborts its client: then the rate is not the write's.
      if grep -q 'aborted' "$WORK/run.out"; then echo "reach-cost: $script failed:" >&2; grep -m3 'ERROR\|aborted' "$WORK/run.out" >&2; exit 1; fi
      tps[$which]=$(awk '/^tps/ {printf "%.0f", $3}' "$WORK/run.out")
    done
    echo "| $round | $script | ${tps[DISABLE]} | ${tps[ENABLE]} | $(awk -v a="${tps[ENABLE]}" -v b="${tps[DISABLE]}" 'BEGIN {printf "%.3f", a / b}') |"
  done
done
reach ENABLE
