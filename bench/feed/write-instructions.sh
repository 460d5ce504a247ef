#!/usr/bin/env bash
# bench/feed/write-instructions.sh: the instructions PostgreSQL executes for one PATCH's
# transaction, with this tree's migrations and with other revisions' (issue 47, the write path).
#
#   bench/feed/write-instructions.sh <git revision> ...
#
# A scratch cluster of its own (deploy/local.sh with FERRY_LOCAL_DIR in a temporary
# directory, port BENCH_PG_PORT, default 54499) gets a database of this tree: the core
# migrations, then the study app's, each file as `ferry migrate` applies it (then the
# synced tables' triggers regenerated), 100 sets of 100 terms of one user, and a
# procedure that runs a PATCH's transaction N times as Ferry sends it (set the user and
# the collect mode, UPDATE one term by id, read the hints back, COMMIT). Each revision
# gets a copy of it (CREATE DATABASE ... TEMPLATE: the same rows, ids and pages, which
# alone move a count by ~1 %) with that revision's function files applied and the
# generated triggers made again: so it compares the functions and triggers of the
# revisions, not their versioned migrations (tables). The cluster is
# stopped; then, for each database, a single-user backend (`postgres --single`, on a
# fresh copy of the data directory each time) runs the procedure as the serve role (its
# Row Level Security applies) under callgrind, for 100 and for 400 transactions. The
# figure is (instructions of 400 − of 100) ÷ 300: a transaction's instructions, start-up
# left out. Counted, not timed, so other work on the machine does not move it.
#
# Needs root (the cluster's files belong to the postgres user), valgrind, and
# PostgreSQL's server binaries (deploy/local.sh finds them). About a minute a tree.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
[ $# -gt 0 ] || { echo "usage: write-instructions.sh <git revision> ..." >&2; exit 2; }
command -v valgrind >/dev/null || { echo "write-instructions: valgrind is not installed" >&2; exit 2; }
WORK=$(mktemp -d /tmp/ferry-write-instructions.XXXXXX)
chmod 755 "$WORK"
export FERRY_LOCAL_DIR=$WORK/local FERRY_PG_PORT=${BENCH_PG_PORT:-54499} FERRY_MC_PORT=${BENCH_MC_PORT:-11499}
OWNER=postgresql://ferry_owner:ferry_owner@127.0.0.1:$FERRY_PG_PORT
cleanup() { (cd "$ROOT" && bash deploy/local.sh stop >/dev/null 2>&1) || true; rm -rf "$WORK"; }
trap cleanup EXIT
owner() { psql -X -q -v ON_ERROR_STOP=1 "$OWNER/$1" "${@:2}"; }
. "$ROOT/bench/feed/tree-database.sh"

make_database() {
  local db=$1 dir=$2
  tree_database "$db" "$dir" write-instructions
  patch_procedure "$db"
  owner "$db" >/dev/null <<'SQL'
VACUUM ANALYZE app.study_sets;
VACUUM ANALYZE app.terms;
VACUUM ANALYZE public.bench_ids;
SQL
}

# One PATCH's transaction a turn (PostgresGateway's statements), committed each time. Where
# the database has a row hints function for app.terms (issue 47 item 4), the UPDATE calls
# it in its RETURNING clause, as Ferry's one-row UPDATE (FastUpdateSQL) does.
patch_procedure() {
  owner "$1" >/dev/null <<'SQL'
DO $do$
DECLARE
    v_hints text := (SELECT 'ferry.' || p.proname FROM pg_proc p
                      WHERE p.pronamespace = 'ferry'::regnamespace AND p.proname = 'sync_hints_' || 'app.terms'::regclass::oid);
BEGIN
    EXECUTE format($p$
CREATE OR REPLACE PROCEDURE public.bench_patches(p_user text, p_count int) LANGUAGE plpgsql AS $$
DECLARE
    v_hints text;
    v_hinted boolean;
BEGIN
    FOR i IN 1 .. p_count LOOP
        PERFORM pg_catalog.set_config('ferry.user_id', p_user, true), pg_catalog.set_config('ferry.hint_mode', 'collect', true);
        UPDATE app.terms t SET definition = 'patched ' || i WHERE id = (SELECT id FROM public.bench_ids WHERE n = 1 + i %% 1000)
            %s;
        v_hints := pg_catalog.current_setting('ferry.hints', true);
        COMMIT;
    END LOOP;
END $$$p$, CASE WHEN v_hints IS NULL THEN '' ELSE 'RETURNING ' || v_hints || '(t) INTO v_hinted' END);
END $do$;
GRANT EXECUTE ON PROCEDURE public.bench_patches(text, int) TO ferry_app;
SQL
}

(cd "$ROOT" && bash deploy/local.sh start >/dev/null)
PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n1)
names=(tree)
make_database tree "$ROOT/migrations"
for rev in "$@"; do
  name=r$(git -C "$ROOT" rev-parse --short "$rev")
  mkdir -p "$WORK/$name"
  git -C "$ROOT" archive "$rev" migrations/functions | tar -x -C "$WORK/$name"
  owner postgres -c "CREATE DATABASE $name TEMPLATE tree" >/dev/null
  # Its generated triggers go first: a refresh keeps a trigger that already calls
  # the table's function, whatever its kind.
  owner "$name" >/dev/null <<'SQL'
DO $$
DECLARE t record;
BEGIN
    FOR t IN SELECT tgname, tgrelid::regclass AS tbl FROM pg_trigger
              WHERE tgname ~ '^zz_ferry_(reach|notify)_' AND NOT tgisinternal LOOP
        EXECUTE format('DROP TRIGGER %I ON %s', t.tgname, t.tbl);
    END LOOP;
END $$;
SQL
  for f in "$WORK/$name"/migrations/functions/*.sql; do
    owner "$name" -1 -f "$f" >/dev/null 2>&1 || { echo "write-instructions: $f failed" >&2; exit 1; }
  done
  owner "$name" -c "SELECT ferry.refresh_sync_rules()" -c "SELECT ferry.refresh_sync_triggers()" >/dev/null
  # A revision before the row hints functions keeps none of this tree's (its functions
  # files do not drop them), and its PATCH does not call one.
  if ! git -C "$ROOT" show "$rev:migrations/functions/live.sql" 2>/dev/null | grep -q sync_hints_source; then
    owner "$name" -tA -c "SELECT p.oid::regprocedure FROM pg_proc p WHERE p.proname ~ '^sync_hints_[0-9]+\$'" \
      | while read -r f; do owner "$name" -c "DROP FUNCTION $f" >/dev/null; done
  fi
  patch_procedure "$name"
  names+=("$name")
done
declare -A user
for db in "${names[@]}"; do user[$db]=$(owner "$db" -tA -c "SELECT id FROM ferry.users WHERE name = 'bench'"); done
(cd "$ROOT" && bash deploy/local.sh stop >/dev/null)
mkdir "$WORK/cg" && chown postgres "$WORK/cg"   # the backend writes callgrind's output as postgres

# instructions DB N: callgrind's total for a single-user backend running N transactions.
instructions() {
  rm -rf "$WORK/copy" && cp -a "$FERRY_LOCAL_DIR/pgdata" "$WORK/copy"
  printf "SET synchronous_commit = off\nSET ROLE ferry_app\nCALL public.bench_patches('%s', %s)\n" "${user[$1]}" "$2" \
    | runuser -u postgres -- valgrind --tool=callgrind --callgrind-out-file="$WORK/cg/out" \
        "$PGBIN/postgres" --single -D "$WORK/copy" -c autovacuum=off "$1" > "$WORK/cg/log" 2>&1
  ! grep -E "ERROR|FATAL" "$WORK/cg/log" >&2 || exit 1
  awk '/^(summary|totals):/ { print $2; exit }' "$WORK/cg/out"
}

echo "bench/feed/write-instructions.sh at $(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD -- migrations || echo ' (migrations changed)'), $(date -u +%Y-%m-%dT%H:%MZ)"
echo
echo "| migrations | instructions a PATCH's transaction | ÷ the first revision's |"
echo "|---|---|---|"
declare -A per
for db in "${names[@]}"; do
  a=$(instructions "$db" 100); b=$(instructions "$db" 400)
  per[$db]=$(( (b - a) / 300 ))
done
for db in "${names[@]}"; do
  label=$db; [ "$db" = tree ] && label="this tree"
  echo "| $label | ${per[$db]} | $(awk -v a="${per[$db]}" -v b="${per[${names[1]}]}" 'BEGIN { printf "%.3f", a / b }') |"
done
