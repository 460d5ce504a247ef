#!/usr/bin/env bash
# bench/feed/window-read.sh: what the default stream's window read costs (issue 46,
# docs/changes-feed.md, "Fan-out: one check for many users' default streams"). One
# write, a term in a set that WAITERS collaborators share, read as a leader's check
# reads it beside its page: ferry.window_keys of app.terms from the cursor before
# the write to the frontier after it, as the serve role (ferry_app), with the
# access logs' read beside it (ferry.access_changed_users: the collaborators'
# WAITERS grants lie before the cursor). Measured at each size of app.terms in
# TERMS (the other rows in other sets, of another user): the read should cost
# the same at every size, as it finds the window by the (_ferry_xid, id) index.
#
#   bench/feed/window-read.sh
#   TERMS=10000,1000000 WAITERS=10000 ROUNDS=3 bench/feed/window-read.sh
#
# Prints for each size, from one session of the serve role after ROUNDS - 1
# reads (which warm its caches): the executed plan of the query
# ferry.window_keys runs (auto_explain, nested statements, analyze and buffers,
# as a NOTICE to the caller), then EXPLAIN (ANALYZE, BUFFERS) of the call and
# of the access logs' read.
#
# Needs the dev services (bash deploy/local.sh start; /work/bin/inwt N does it),
# and root or the postgres user: a superuser sets auto_explain on the scratch database.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
TERMS=${TERMS:-10000,100000,1000000}
WAITERS=${WAITERS:-10000}
ROUNDS=${ROUNDS:-3}
eval "$(bash deploy/local.sh env)"
LOCAL=${FERRY_LOCAL_DIR:-$ROOT/.local}
PG_PORT=${FERRY_PG_PORT:-54329}
DB=window_read_$$
url_for() { python3 -c "import sys,urllib.parse as u; p=u.urlparse(sys.argv[1]); print(p._replace(path='/'+sys.argv[2]).geturl())" "$1" "$2"; }
OWNER=$(url_for "$FERRY_DATABASE_MIGRATION_URL" "$DB")
APP=$(url_for "$FERRY_DATABASE_URL" "$DB")
su_psql() { runuser -u postgres -- psql -X -q -v ON_ERROR_STOP=1 -h "$LOCAL/run" -p "$PG_PORT" "$@"; }
owner() { psql -X -q -tA -v ON_ERROR_STOP=1 "$OWNER" "$@"; }
WORK=$(mktemp -d)
cleanup() { su_psql -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT

su_psql -d postgres -c "CREATE DATABASE $DB OWNER ferry_owner"
# Every migration as `ferry migrate` applies it (Tests/SQL/run.sh's migrate, without its checks).
REFRESH="DO \$\$ BEGIN
  IF pg_catalog.to_regprocedure('ferry.refresh_sync_rules()') IS NOT NULL THEN PERFORM ferry.refresh_sync_rules(); END IF;
  IF pg_catalog.to_regprocedure('ferry.refresh_sync_triggers()') IS NOT NULL THEN PERFORM ferry.refresh_sync_triggers(); END IF;
END \$\$"
for f in migrations/[0-9][0-9][0-9][0-9]_*.sql; do owner -1 -f "$f" -c "$REFRESH" >/dev/null; done
repeatable=()
for f in migrations/functions/*.sql; do repeatable+=(-f "$f"); done
owner -1 -c "SET LOCAL check_function_bodies = off" "${repeatable[@]}" -c "SET LOCAL check_function_bodies TO DEFAULT" \
  -c "$REFRESH" >/dev/null
for f in examples/study/migrations/[0-9][0-9][0-9][0-9]_*.sql; do
  owner -1 -c "SET LOCAL client_min_messages = warning" -f "$f" -c "$REFRESH" >/dev/null
done

# The shared set, its owner and WAITERS collaborators (users written directly: no password
# hashing, nobody signs in), and the user whose sets hold the other terms.
SHARED=$(owner -v waiters="$WAITERS" <<'SQL' | tail -n1
SELECT ferry.create_user('owner', 'bench-password') \gset
SELECT ferry.create_user('bulk', 'bench-password') \gset
INSERT INTO ferry.users (name, password_hash) SELECT 'waiter_' || g, 'x' FROM generate_series(1, :waiters) g;
INSERT INTO app.study_sets (creator_id, title) SELECT id, 'shared' FROM ferry.users WHERE name = 'owner';
INSERT INTO app.set_collaborators (set_id, user_id)
  SELECT s.id, u.id FROM app.study_sets s, ferry.users u WHERE s.title = 'shared' AND u.name LIKE 'waiter\_%';
INSERT INTO app.terms (set_id, word) SELECT id, 'first' FROM app.study_sets WHERE title = 'shared';
SELECT id FROM app.study_sets WHERE title = 'shared';
SQL
)
# auto_explain for the serve role's sessions only, each plan a NOTICE to the caller
# (the session below lets one statement's through).
for setting in "session_preload_libraries = 'auto_explain'" "auto_explain.log_min_duration = 0" "auto_explain.log_analyze = on" \
  "auto_explain.log_buffers = on" "auto_explain.log_nested_statements = on" "auto_explain.log_level = notice"; do
  su_psql -d "$DB" -c "ALTER ROLE ferry_app IN DATABASE $DB SET $setting"
done

echo "window read of one write to a set $WAITERS collaborators share; load average $(cut -d' ' -f1-3 /proc/loadavg)"
have=1
for size in ${TERMS//,/ }; do
  # Grow app.terms to `size` rows, the others in sets of 100 of the user 'bulk'.
  if [ "$size" -gt "$have" ]; then
    owner -v from="$have" -v upto="$size" <<'SQL' >/dev/null
INSERT INTO app.study_sets (creator_id, title)
  SELECT u.id, 'bulk ' || g FROM ferry.users u, generate_series(:from / 100 + 1, (:upto + 99) / 100) g WHERE u.name = 'bulk';
INSERT INTO app.terms (set_id, word, definition)
  SELECT s.id, 'word ' || g, 'a definition of some length for row ' || g
    FROM app.study_sets s, generate_series(1, 100) g
   WHERE s.title LIKE 'bulk %' AND split_part(s.title, ' ', 2)::int > :from / 100
   LIMIT :upto - :from;
VACUUM ANALYZE app.terms;
VACUUM ANALYZE app.study_sets;
SQL
    have=$size
  fi
  # A client caught up before the write holds the frontier cursor: the frontier less one.
  cursor=$(owner -c "SELECT (ferry.feed_frontier()::text::numeric - 1)::text")
  owner -c "INSERT INTO app.terms (set_id, word) VALUES ('$SHARED', 'new at $size')" >/dev/null
  upto=$(owner -c "SELECT ferry.feed_frontier()::text")
  read="SELECT ferry.window_keys('app.terms'::regclass, ARRAY['set_id']::name[], '$cursor'::xid8, '$upto'::xid8, 1000)"
  users="SELECT ferry.access_changed_users('$cursor'::xid8, 1000)"
  echo
  echo "== app.terms: $(owner -c "SELECT count(*) FROM app.terms") rows; cursor $cursor, frontier $upto"
  # One session as the serve role: ROUNDS - 1 reads (its catalog caches and the pages warm),
  # then the read with its nested plans let through, then EXPLAIN of the call and of the
  # access logs' read.
  warm=()
  for _ in $(seq "$((ROUNDS - 1))"); do warm+=(-c "$read" -c "$users"); done
  psql -X -q -tA -v ON_ERROR_STOP=1 "$APP" -c "SET client_min_messages = warning" -c '\o /dev/null' "${warm[@]}" -c '\o' \
    -c "SET client_min_messages = notice" -c "$read" -c "SET client_min_messages = warning" -c "SELECT '--'" \
    -c "EXPLAIN (ANALYZE, BUFFERS) $read" -c "SELECT '--'" -c "EXPLAIN (ANALYZE, BUFFERS) $users" \
    >"$WORK/out" 2>"$WORK/notices"
  echo "-- the read (as ferry_app): $(head -n1 "$WORK/out")"
  echo "-- its query, as ferry.window_keys runs it (auto_explain):"
  awk '/Query Text: SELECT CASE WHEN count/ { on = 1 } on && /^NOTICE:/ { on = 0 } on' "$WORK/notices" | sed 's/^/   /'
  echo "-- the call (EXPLAIN (ANALYZE, BUFFERS)):"
  awk '/^--$/ { n++; next } n == 1' "$WORK/out" | sed 's/^/   /'
  echo "-- the access logs' read beside it (EXPLAIN (ANALYZE, BUFFERS)):"
  awk '/^--$/ { n++; next } n == 2' "$WORK/out" | sed 's/^/   /'
done
