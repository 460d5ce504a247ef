#!/usr/bin/env bash
# SQL-level tests of Ferry's migrations (migrations/) and the study example's
# (examples/study/migrations) against a real PostgreSQL.
#
#   bash Tests/SQL/run.sh [scratch_db_name]
#
# Needs FERRY_TEST_OWNER_URL (the owner role, with CREATEDB) and
# FERRY_TEST_APP_URL (the RLS-subject app role ferry_app); deploy/test.sh
# exports both. Creates a scratch database as the owner, applies every
# migrations/NNNN_*.sql in order, then migrations/functions/*.sql (in one
# transaction), then every examples/study/migrations/NNNN_*.sql
# (each with psql --single-transaction and the refresh of what Ferry generates,
# as `ferry migrate` does: Ferry's own first, then the app's), runs each
# Tests/SQL/NN_*.sql file as the role named on its first line (`-- role:
# owner` or `-- role: app`) and each NN_*.sh
# (tests needing concurrent sessions, given both URLs), then applies the
# migrations once more to a second fresh database. Prints `N passed, N failed`,
# drops the scratch databases, and exits non-zero on any failure.
#
# Files named _* are fixtures, never run on their own: _prelude.sql runs before
# each SQL test in its session; a test that shares more setup with others
# includes a fixture itself (`\ir _live_hints.sql`), and a shell test sources
# _sessions.sh.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)

fail_setup() { echo "run.sh: $*" >&2; exit 2; }
[ -n "${FERRY_TEST_OWNER_URL:-}" ] || fail_setup "FERRY_TEST_OWNER_URL is not set (e.g. postgresql://ferry_owner:...@127.0.0.1:54329/ferry)"
[ -n "${FERRY_TEST_APP_URL:-}" ] || fail_setup "FERRY_TEST_APP_URL is not set (e.g. postgresql://ferry_app:...@127.0.0.1:54329/ferry)"

PSQL=psql
if [ -n "${FERRY_TEST_PG_BIN:-}" ] && [ -x "$FERRY_TEST_PG_BIN/psql" ]; then PSQL="$FERRY_TEST_PG_BIN/psql"; fi
command -v "$PSQL" >/dev/null || fail_setup "psql not found"
export PGCONNECT_TIMEOUT=${PGCONNECT_TIMEOUT:-10}

DB=${1:-ferry_sqltest_$(date +%s)_$RANDOM}
[[ "$DB" =~ ^[a-z_][a-z0-9_]{0,50}$ ]] || fail_setup "scratch database name must match [a-z_][a-z0-9_]*: $DB"
DB2="${DB}_again"

# The same URL with another database name (query parameters kept).
url_for() {
  local url=$1 db=$2 base query=""
  base=${url%%\?*}
  [[ "$url" == *\?* ]] && query="?${url#*\?}"
  echo "${base%/*}/$db$query"
}
for u in "$FERRY_TEST_OWNER_URL" "$FERRY_TEST_APP_URL"; do
  [[ "${u%%\?*}" =~ ^postgres(ql)?://[^/]*/[^/]+$ ]] || fail_setup "URL must be postgresql://user:password@host:port/dbname: ${u%%:*}://..."
done
OWNER_URL=$(url_for "$FERRY_TEST_OWNER_URL" "$DB")
APP_URL=$(url_for "$FERRY_TEST_APP_URL" "$DB")
OWNER_URL2=$(url_for "$FERRY_TEST_OWNER_URL" "$DB2")

admin() { "$PSQL" -X -q -v ON_ERROR_STOP=1 "$FERRY_TEST_OWNER_URL" -c "$1"; }
cleanup() {
  admin "DROP DATABASE IF EXISTS \"$DB\"" >/dev/null 2>&1 || echo "run.sh: could not drop $DB" >&2
  admin "DROP DATABASE IF EXISTS \"$DB2\"" >/dev/null 2>&1 || echo "run.sh: could not drop $DB2" >&2
  rm -rf "$TMP"
}
TMP=$(mktemp -d)
trap cleanup EXIT

passed=0
failed=0
report() { # name status output
  if [ "$2" = 0 ]; then
    passed=$((passed + 1)); echo "ok    $1"
  else
    failed=$((failed + 1)); echo "FAIL  $1"; printf '%s\n' "$3" | sed 's/^/      /'
  fi
}

# What `ferry migrate` runs after each file, in its transaction
# (Migrator+Apply.swift, refreshGenerated): the rules' and the triggers' refresh,
# once the migrations so far define them.
REFRESH="DO \$\$ BEGIN
  IF pg_catalog.to_regprocedure('ferry.refresh_sync_rules()') IS NOT NULL THEN PERFORM ferry.refresh_sync_rules(); END IF;
  IF pg_catalog.to_regprocedure('ferry.refresh_sync_triggers()') IS NOT NULL THEN PERFORM ferry.refresh_sync_triggers(); END IF;
END \$\$"

# Applies every migration to the database at $1, as `ferry migrate` does: Ferry's
# versioned files, then Ferry's repeatable files (migrations/functions) together in
# one transaction with function bodies unchecked (Migrator+Repeatables.swift), then the
# study app's files; prints psql's complaints.
migrate() {
  local url=$1 f repeatable=()
  for f in "$ROOT"/migrations/[0-9][0-9][0-9][0-9]_*.sql; do
    "$PSQL" -X -q -v ON_ERROR_STOP=1 --single-transaction -f "$f" -c "$REFRESH" "$url" >/dev/null 2>"$TMP/migrate.err" \
      || { echo "$(basename "$f"):"; cat "$TMP/migrate.err"; return 1; }
  done
  for f in "$ROOT"/migrations/functions/*.sql; do repeatable+=(-f "$f"); done
  "$PSQL" -X -q -v ON_ERROR_STOP=1 --single-transaction -c "SET LOCAL check_function_bodies = off" "${repeatable[@]}" \
    -c "SET LOCAL check_function_bodies TO DEFAULT" -c "$REFRESH" "$url" >/dev/null 2>"$TMP/migrate.err" \
    || { echo "migrations/functions:"; cat "$TMP/migrate.err"; return 1; }
  for f in "$ROOT"/examples/study/migrations/[0-9][0-9][0-9][0-9]_*.sql; do
    "$PSQL" -X -q -v ON_ERROR_STOP=1 --single-transaction -f "$f" -c "$REFRESH" "$url" >/dev/null 2>"$TMP/migrate.err" \
      || { echo "$(basename "$f"):"; cat "$TMP/migrate.err"; return 1; }
  done
}

admin "CREATE DATABASE \"$DB\"" || fail_setup "could not create scratch database $DB"
out=$(migrate "$OWNER_URL" 2>&1); st=$?
report "migrations apply to a fresh database ($DB)" $st "$out"
if [ $st != 0 ]; then
  echo "$passed passed, $failed failed"
  exit 1
fi

for t in "$HERE"/[0-9][0-9]_*.sql "$HERE"/[0-9][0-9]_*.sh; do
  [ -e "$t" ] || continue
  role=$(grep -m1 '^\(--\|#\) role:' "$t" | sed -n 's/^\(--\|#\) role: *\([a-z]*\).*/\2/p')
  case "$role" in
    owner) url=$OWNER_URL ;;
    app) url=$APP_URL ;;
    *) report "$(basename "$t")" 1 "needs a '-- role: owner|app' line ('# role:' in shell tests)"; continue ;;
  esac
  if [[ "$t" == *.sh ]]; then
    # Shell tests drive several sessions at once; they get both URLs.
    out=$(SQLTEST_OWNER_URL=$OWNER_URL SQLTEST_APP_URL=$APP_URL PSQL=$PSQL bash "$t" 2>&1); st=$?
  else
    out=$("$PSQL" -X -q -tA -v ON_ERROR_STOP=1 -f "$HERE/_prelude.sql" -f "$t" "$url" 2>&1); st=$?
  fi
  if [ $st = 0 ] && ! grep -q '^PASS' <<<"$out"; then st=1; out="$out
(no PASS line)"; fi
  report "$(basename "$t") as $role" $st "$out"
done

admin "CREATE DATABASE \"$DB2\"" || fail_setup "could not create scratch database $DB2"
out=$(migrate "$OWNER_URL2" 2>&1); st=$?
if [ $st = 0 ]; then
  out=$("$PSQL" -X -q -tA -v ON_ERROR_STOP=1 "$OWNER_URL2" -c \
    "DO \$\$ BEGIN IF (SELECT count(*) FROM ferry.sync_resources) <> 8 THEN RAISE EXCEPTION 'expected 8 synced tables'; END IF; END \$\$" 2>&1); st=$?
fi
report "migrations apply to a second fresh database ($DB2)" $st "$out"

echo "$passed passed, $failed failed"
[ $failed = 0 ]
