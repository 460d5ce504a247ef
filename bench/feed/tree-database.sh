# Sourced by hint-cost.sh and write-instructions.sh, which compare the SQL of two trees
# (a baseline revision's migrations against this one's), so they apply files with psql
# rather than through one `ferry migrate` binary. Needs owner() (psql as the owner on
# the database named first) and ROOT.

# tree_database DB MIGRATIONS_DIR WHO: DB created from the core migrations of
# MIGRATIONS_DIR, then the study app's, each file as `ferry migrate` applies it (one
# transaction, then the synced tables' triggers regenerated), with 100 sets of 100 terms
# of one user, and public.bench_ids: 1,000 of those terms' ids at random. WHO names the
# script in an error.
tree_database() {
  local db=$1 dir=$2 who=$3 f
  owner postgres -c "CREATE DATABASE $db" >/dev/null
  # The versioned files, then the function files where the tree has them, together in one
  # transaction with check_function_bodies off (a family may call a function a later one
  # defines), then the study app's (migrations/README.md, "How they run").
  local functions=() refresh="DO \$\$ BEGIN IF to_regprocedure('ferry.refresh_sync_triggers()') IS NOT NULL
                                 THEN PERFORM ferry.refresh_sync_triggers(); END IF; END \$\$"
  for f in "$dir"/functions/*.sql; do [ -e "$f" ] && functions+=(-f "$f"); done
  for f in "$dir"/[0-9]*.sql functions "$ROOT"/examples/study/migrations/*.sql; do
    if [ "$f" = functions ]; then
      [ ${#functions[@]} -gt 0 ] || continue
      PGOPTIONS="-c check_function_bodies=off" owner "$db" -1 "${functions[@]}" >/dev/null 2>&1 \
        || { echo "$who: $dir/functions failed" >&2; exit 1; }
    else
      owner "$db" -1 -f "$f" >/dev/null 2>&1 || { echo "$who: $f failed" >&2; exit 1; }
    fi
    owner "$db" -c "$refresh" >/dev/null
  done
  owner "$db" >/dev/null <<'SQL'
SELECT ferry.create_user('bench', 'bench-password');
INSERT INTO app.study_sets (creator_id, title) SELECT u.id, 'set ' || g FROM ferry.users u, generate_series(1, 100) g WHERE u.name = 'bench';
INSERT INTO app.terms (set_id, word, definition, rank)
SELECT s.id, 'word ' || g, 'definition of word ' || g, lpad(g::text, 4, '0') || 'V' FROM app.study_sets s, generate_series(1, 100) g;
CREATE TABLE public.bench_ids (n int PRIMARY KEY, id uuid NOT NULL);
INSERT INTO public.bench_ids SELECT row_number() OVER (), id FROM (SELECT id FROM app.terms ORDER BY random() LIMIT 1000) t;
GRANT SELECT ON public.bench_ids TO ferry_app;
SQL
}
