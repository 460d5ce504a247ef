#!/usr/bin/env bash
# bench/feed/patch-profile.sh: where PostgreSQL's instructions for one PATCH go, as Ferry
# sends it (issue 47, the write path): callgrind_annotate of a single-user backend.
#
#   bench/feed/patch-profile.sh [functions to list, default 40]
#   BENCH_REVISION=<git revision> bench/feed/patch-profile.sh   (that revision's migrations)
#
# The database is write-instructions.sh's (this tree's migrations, the study app, 100 sets of
# 100 terms of one user; bench/feed/tree-database.sh), in a scratch cluster of its own
# (BENCH_PG_PORT, default 54498). Unlike write-instructions.sh, whose procedure runs the
# PATCH's statements from PL/pgSQL (plans cached there), the backend here gets the three
# statements a PATCH's transaction sends as Ferry sends them: named prepared statements
# (PREPARE once, EXECUTE each time; Ferry prepares `stmt_N` on each pooled connection), the
# UPDATE's text copied from a release build's log_statement. As the serve role, so Row Level
# Security applies. Two runs of N transactions (100 and 400, one `postgres --single` each, on
# a fresh copy of the data directory); a function's figure is (its inclusive instructions at
# 400 − at 100) ÷ 300, so start-up and first-call work (catalog caches, PL/pgSQL compiling)
# fall out. The session is set up as Ferry sets up its pooled connections (generic plans,
# no JIT); BENCH_SESSION_SQL adds one more statement (e.g. `SET plan_cache_mode = auto`).
# BENCH_OWNER_SQL runs one statement as the owner before the runs. BENCH_UPDATE=read sends the
# UPDATE as Ferry did before stop 17 (see stream below); BENCH_UPDATE=sets sends one that sets
# the sync columns itself (BENCH_STAMP=call or sql), for a write path that skips the update
# trigger (measured at stop 27, not built: bench/feed/README.md).
# BENCH_WAKE_UPS=off turns the live wake-ups off first, as bench/feed/notify-cost.sh does
# (`wake_ups off` in bench/api/api.sh: the notify triggers disabled, each row hints function
# a constant false), so that the two runs' difference is what the hints cost the writer.
# BENCH_COMPARE=plain sends the UPDATE's change test as Ferry did before stop 25 (no collation "C").
# BENCH_WRITE=post profiles a POST of 100 terms into one set instead (each into the next set), as
# Ferry sends a POST of several items (ferry.write_items with bench/feed/create-terms.sql's
# statement), 20 and 80 transactions.
# Needs root, valgrind, PostgreSQL's server binaries. A few minutes (more under load).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TOP=${1:-40}
command -v valgrind >/dev/null || { echo "patch-profile: valgrind is not installed" >&2; exit 2; }
WORK=$(mktemp -d /tmp/ferry-patch-profile.XXXXXX)
chmod 755 "$WORK"
export FERRY_LOCAL_DIR=$WORK/local FERRY_PG_PORT=${BENCH_PG_PORT:-54498} FERRY_MC_PORT=${BENCH_MC_PORT:-11498}
OWNER=postgresql://ferry_owner:ferry_owner@127.0.0.1:$FERRY_PG_PORT
cleanup() { (cd "$ROOT" && bash deploy/local.sh stop >/dev/null 2>&1) || true; [ -n "${BENCH_KEEP:-}" ] || rm -rf "$WORK"; }
trap cleanup EXIT
owner() { psql -X -q -v ON_ERROR_STOP=1 "$OWNER/$1" "${@:2}"; }
. "$ROOT/bench/feed/tree-database.sh"

(cd "$ROOT" && bash deploy/local.sh start >/dev/null)
PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n1)
MIGRATIONS=$ROOT/migrations
if [ -n "${BENCH_REVISION:-}" ]; then
  git -C "$ROOT" archive "$BENCH_REVISION" migrations | tar -x -C "$WORK"
  MIGRATIONS=$WORK/migrations
fi
tree_database tree "$MIGRATIONS" patch-profile
owner tree -c "VACUUM ANALYZE app.study_sets" -c "VACUUM ANALYZE app.terms" >/dev/null
USER_ID=$(owner tree -tA -c "SELECT id FROM ferry.users WHERE name = 'bench'")
owner tree -tA -c "SELECT id FROM public.bench_ids ORDER BY n" > "$WORK/ids"
if [ "${BENCH_WAKE_UPS:-on}" = off ]; then
  # As bench/api/api.sh's wake_ups off (bench/api/wake-ups-off.sql): no hint made anywhere,
  # and the UPDATE below sent as Ferry then sends it, with no mark and no stamp columns.
  owner tree -1 -f "$ROOT/bench/api/wake-ups-off.sql" >/dev/null
fi
# app.terms' row mark function, where the migrations make one (issue 47 item 4, RowHints): Ferry's
# one-row UPDATE then returns the row's stamp, writer and scope key (FastUpdateSQL), and so does
# stmt_6, beside the mark (below) or, before stop 22, a call of the mark function; else its row
# hints function, which the UPDATE called before (migrations that have it and no mark function).
fn() { owner tree -tA -c "SELECT 'ferry.' || p.proname FROM pg_proc p
                          WHERE p.pronamespace = 'ferry'::regnamespace AND p.proname = '$1' || 'app.terms'::regclass::oid"; }
MARK=$(fn sync_mark_)
HINTS=$(fn sync_hints_)
# Migrations whose update trigger hints an UPDATE's rows (stop 22: ferry.sync_row_hints_source):
# Ferry's UPDATE then marks its row in its SET list (ferry.made, RowHints.madeHere) and calls no
# mark function; before, it called the mark function in its RETURNING clause.
MADE=
if [ -n "$MARK" ] && [ "$(owner tree -tA -c "SELECT to_regproc('ferry.sync_row_hints_source') IS NOT NULL")" = t ]; then
  MADE=" WHERE pg_catalog.set_config('ferry.made', '$(owner tree -tA -c "SELECT 'app.terms'::regclass::oid") ' || \"t\".\"id\"::text, true) IS NOT NULL"
fi
# BENCH_WRITE=post: a POST of 100 terms instead (post_stream below), 20 and 80 transactions.
WRITE=${BENCH_WRITE:-patch}
FEW=100 MANY=400
if [ "$WRITE" = post ]; then
  FEW=20 MANY=80
  # Each POST into the next of the sets, as post100.lua spreads them (each row's foreign key locks its set).
  owner tree -tA -c "SELECT id FROM app.study_sets ORDER BY id" > "$WORK/sets"
fi
# BENCH_OWNER_SQL: one more statement as the owner before the runs (e.g. a trigger disabled, to
# see what it costs).
[ -z "${BENCH_OWNER_SQL:-}" ] || owner tree -c "$BENCH_OWNER_SQL" >/dev/null
(cd "$ROOT" && bash deploy/local.sh stop >/dev/null)
mkdir "$WORK/cg" && chown postgres "$WORK/cg"

# stream N: the statements for N transactions, one a line (a single-user backend's query ends at a newline).
stream() {
  echo "SET synchronous_commit = off"
  echo "SET ROLE ferry_app"
  # What Ferry sets on each pooled connection (FerryApp.sessionSetup, prepared statements on).
  echo "SET plan_cache_mode = force_generic_plan"
  echo "SET jit = off"
  [ -z "${BENCH_SESSION_SQL:-}" ] || echo "$BENCH_SESSION_SQL"
  echo "PREPARE stmt_5(text) AS SELECT pg_catalog.set_config('ferry.user_id', \$1, true), pg_catalog.set_config('ferry.hint_mode', 'collect', true)"
  if [ "$WRITE" = post ]; then post_stream "$1"; return; fi
  # Ferry's PATCH of one row (Sources/Ferry, FastUpdateSQL with If-Match: *), as a release build logged it:
  # BENCH_UPDATE=read, as before stop 17 (the base revision read from the item in SQL, the path id
  # matched against the uuid pattern, the item's JSON type checked); by default, as Ferry sends it
  # since, for a body whose fields passed FieldPrecheck (the base revision a fifth bind, $5).
  # made: the SET list's sub-select, with the row's mark when Ferry sends one.
  made() { sed "s# m)\$# m${MADE})#"; }
  # set_list: the UPDATE sets the sync columns itself, as the update trigger would: the revision,
  # the time, the writer, the field revisions of what it changes and the transaction's stamp
  # (BENCH_STAMP=call: ferry.stamp(), which calls ferry.take_stamp() once a transaction; sql:
  # take_stamp's steps as one expression, the lock before the floor's read by a CASE). No mark:
  # the trigger is not to run. Pair it with BENCH_OWNER_SQL disabling the trigger and granting
  # the serve role those columns.
  set_list() {
    local stamp revisions
    stamp="coalesce(nullif(pg_catalog.current_setting('ferry.stamp', true), '')::pg_catalog.xid8, (SELECT pg_catalog.set_config('ferry.stamp', s.stamp::pg_catalog.text, true)::pg_catalog.xid8 FROM (SELECT x.xid, greatest(x.xid, CASE WHEN pg_catalog.pg_advisory_xact_lock_shared(1181905529, ferry.stamp_key(x.xid))::pg_catalog.text = '' THEN coalesce(pg_catalog.pg_sequence_last_value('ferry.stamp_floor'), 0)::pg_catalog.text::pg_catalog.xid8 END) AS stamp FROM (SELECT pg_catalog.pg_current_xact_id() AS xid) x) s WHERE NOT (s.stamp > s.xid AND coalesce(pg_catalog.pg_sequence_last_value('ferry.stamp_floor_taken'), 0) < s.stamp::pg_catalog.text::pg_catalog.int8) OR pg_catalog.setval('ferry.stamp_floor_taken', s.stamp::pg_catalog.text::pg_catalog.int8) IS NOT NULL))"
    [ "${BENCH_STAMP:-sql}" != call ] || stamp='ferry.stamp()'
    revisions='t."_ferry_field_revisions" || pg_catalog.jsonb_strip_nulls(pg_catalog.jsonb_build_object('
    for f in word definition rank; do
      revisions+="'$f', CASE WHEN (m.\"$f\") COLLATE pg_catalog.\"C\" IS DISTINCT FROM (t.\"$f\") COLLATE pg_catalog.\"C\" THEN t.\"revision\" + 1 END, "
    done
    revisions="${revisions%, }))"
    sed -e "s#SET (\"word\", \"definition\", \"rank\") = (SELECT m.\"word\", m.\"definition\", m.\"rank\" FROM#SET (\"word\", \"definition\", \"rank\", \"_ferry_field_revisions\") = (SELECT m.\"word\", m.\"definition\", m.\"rank\", $revisions FROM#" \
        -e "s# m)\$# m), \"revision\" = t.\"revision\" + 1, \"last_modified\" = greatest(ferry.now_ms(), t.\"last_modified\" + 1), \"_ferry_writer\" = ferry.current_user_id(), \"_ferry_xid\" = $stamp#"
  }
  if [ "${BENCH_UPDATE:-bound}" = read ]; then
    made <<'SQL' | tr '\n' ' '
PREPARE stmt_6(jsonb, text, bigint[], boolean) AS WITH i AS (
  SELECT 0 AS idx, ($1::jsonb) -> 0 AS item
)
UPDATE "app"."terms" AS t SET ("word", "definition", "rank") = (SELECT m."word", m."definition", m."rank" FROM jsonb_populate_record(t, i.item - ARRAY['id', 'revision', 'last_modified', 'is_deleted']) m)
  FROM i
 WHERE t."id" = CASE WHEN $2::text ~ '^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$' THEN ($2::text)::uuid END
   AND jsonb_typeof(i.item) = 'object'
   AND NOT t."is_deleted"
   AND ($3::bigint[] IS NULL OR t."revision" = ANY ($3::bigint[]))
   AND ((CASE WHEN CASE WHEN jsonb_typeof(i.item -> 'revision') = 'number' THEN (i.item -> 'revision' #>> '{}')::numeric = trunc((i.item -> 'revision' #>> '{}')::numeric) AND (i.item -> 'revision' #>> '{}')::numeric BETWEEN 0 AND 9223372036854775807 ELSE false END THEN (i.item ->> 'revision')::numeric::bigint END) IS NULL AND ($3::bigint[] IS NOT NULL OR coalesce($4::boolean, false)) OR (CASE WHEN CASE WHEN jsonb_typeof(i.item -> 'revision') = 'number' THEN (i.item -> 'revision' #>> '{}')::numeric = trunc((i.item -> 'revision' #>> '{}')::numeric) AND (i.item -> 'revision' #>> '{}')::numeric BETWEEN 0 AND 9223372036854775807 ELSE false END THEN (i.item ->> 'revision')::numeric::bigint END) = t."revision")
SQL
    BASE_ARG=
  else
    # BENCH_UPDATE=sets: the same UPDATE setting the sync columns itself (set_list).
    local update=made
    [ "${BENCH_UPDATE:-bound}" = sets ] && update=set_list
    $update <<'SQL' | tr '\n' ' '
PREPARE stmt_6(jsonb, text, bigint[], boolean, bigint) AS WITH i AS (
  SELECT 0 AS idx, ($1::jsonb) -> 0 AS item
)
UPDATE "app"."terms" AS t SET ("word", "definition", "rank") = (SELECT m."word", m."definition", m."rank" FROM jsonb_populate_record(t, i.item - ARRAY['id', 'revision', 'last_modified', 'is_deleted']) m)
  FROM i
 WHERE t."id" = ($2::text)::uuid
   AND NOT t."is_deleted"
   AND ($3::bigint[] IS NULL OR t."revision" = ANY ($3::bigint[]))
   AND (($5::bigint) IS NULL AND ($3::bigint[] IS NOT NULL OR coalesce($4::boolean, false)) OR ($5::bigint) = t."revision")
SQL
    BASE_ARG=", NULL"
  fi
  # The change test compares strings in collation "C" (SQL.distinct, stop 25); BENCH_COMPARE=plain
  # sends it as before, with the columns' own collation.
  if [ "${BENCH_COMPARE:-c}" = plain ]; then
    tr '\n' ' ' <<'SQL'
   AND EXISTS (SELECT 1 FROM jsonb_populate_record(t, i.item - ARRAY['id', 'revision', 'last_modified', 'is_deleted']) m WHERE (m."word" IS DISTINCT FROM t."word" OR m."definition" IS DISTINCT FROM t."definition" OR m."rank" IS DISTINCT FROM t."rank") AND NOT (i.item ? 'set_id' AND (m."set_id" IS DISTINCT FROM t."set_id")))
SQL
  else
    tr '\n' ' ' <<'SQL'
   AND EXISTS (SELECT 1 FROM jsonb_populate_record(t, i.item - ARRAY['id', 'revision', 'last_modified', 'is_deleted']) m WHERE ((m."word") COLLATE pg_catalog."C" IS DISTINCT FROM (t."word") COLLATE pg_catalog."C" OR (m."definition") COLLATE pg_catalog."C" IS DISTINCT FROM (t."definition") COLLATE pg_catalog."C" OR (m."rank") COLLATE pg_catalog."C" IS DISTINCT FROM (t."rank") COLLATE pg_catalog."C") AND NOT (i.item ? 'set_id' AND (m."set_id" IS DISTINCT FROM t."set_id")))
SQL
  fi
  tr '\n' ' ' <<'SQL'
RETURNING 200, json_build_array(CASE WHEN t."is_deleted" THEN json_build_object('id', t."id", 'set_id', t."set_id", 'revision', t."revision", 'last_modified', t."last_modified", 'is_deleted', true) ELSE json_build_object('id', t."id", 'set_id', t."set_id", 'word', t."word", 'definition', t."definition", 'rank', t."rank", 'revision', t."revision", 'last_modified', t."last_modified", 'is_deleted', t."is_deleted") END)::text, t."revision", t."last_modified", $2::text
SQL
  if [ -n "$MADE" ]; then
    printf ', t."_ferry_xid" AS ferry_hint_stamp, t."_ferry_writer" AS ferry_hint_writer, t."set_id" AS ferry_hint_scope_0'
  elif [ -n "$MARK" ]; then
    printf ', %s(t) AS ferry_hinted, t."_ferry_xid" AS ferry_hint_stamp, t."_ferry_writer" AS ferry_hint_writer, t."set_id" AS ferry_hint_scope_0' "$MARK"
  elif [ -n "$HINTS" ]; then
    printf ', %s(t) AS hinted' "$HINTS"
  fi
  echo
  echo "PREPARE stmt_7 AS SELECT pg_catalog.current_setting('ferry.hints', true)"
  awk -v n="$1" -v u="$USER_ID" -v b="$BASE_ARG" '{ id[NR] = $1 } END {
    for (i = 1; i <= n; i++) {
      print "BEGIN"
      print "EXECUTE stmt_5('\''" u "'\'')"
      print "EXECUTE stmt_6('\''[{\"definition\": \"patched " i "\"}]'\'', '\''" id[1 + i % NR] "'\'', NULL, true" b ")"
      print "EXECUTE stmt_7"
      print "COMMIT"
    } }' "$WORK/ids"
}

# BENCH_WRITE=post: a POST of 100 terms into one set a transaction, through ferry.write_items as
# Ferry sends a POST of several items (bench/feed/create-terms.sql, the statement's text a bind).
post_stream() {
  local text
  text=$(sed -e '/^--/d' "$ROOT/bench/feed/create-terms.sql")
  echo "PREPARE stmt_6(text, jsonb) AS SELECT * FROM ferry.write_items('app.terms'::pg_catalog.regclass, \$1::text, \$2::jsonb)"
  echo "PREPARE stmt_7 AS SELECT pg_catalog.current_setting('ferry.hints', true)"
  text=$(tr '\n' ' ' <<<"$text" | sed "s/'/''/g")
  # The text through the environment: awk -v would read its \n as a newline.
  SQL_TEXT=$text awk -v n="$1" -v u="$USER_ID" '{ set[NR] = $1 } END {
    sql = ENVIRON["SQL_TEXT"]
    for (i = 1; i <= n; i++) {
      items = ""
      s = set[1 + i % NR]
      for (k = 1; k <= 100; k++) items = items (k > 1 ? ", " : "") sprintf("{\"set_id\": \"%s\", \"word\": \"new %d.%d\", \"definition\": \"d\", \"rank\": \"V%03dV\"}", s, i, k, k)
      print "BEGIN"
      print "EXECUTE stmt_5('\''" u "'\'')"
      print "EXECUTE stmt_6('\''" sql "'\'', '\''[" items "]'\'')"
      print "EXECUTE stmt_7"
      print "COMMIT"
    } }' "$WORK/sets"
}

# profile N: callgrind's inclusive figure of every function, N transactions, into $WORK/cg/incl.N.
profile() {
  rm -rf "$WORK/copy" && cp -a "$FERRY_LOCAL_DIR/pgdata" "$WORK/copy"
  stream "$1" | runuser -u postgres -- valgrind --tool=callgrind --callgrind-out-file="$WORK/cg/out.$1" \
      "$PGBIN/postgres" --single -D "$WORK/copy" -c autovacuum=off tree > "$WORK/cg/log.$1" 2>&1
  ! grep -E "ERROR|FATAL" "$WORK/cg/log.$1" >&2 || exit 1
  [ "$(grep -c 'UPDATE 1' "$WORK/cg/log.$1" || true)" = 0 ] || true
  callgrind_annotate --inclusive=yes --threshold=100 "$WORK/cg/out.$1" 2>/dev/null \
    | awk '$1 ~ /^[0-9,]+$/ && NF >= 2 { n = $1; gsub(",", "", n); $1 = ""; sub(/^ +/, ""); sub(/ \[.*$/, ""); print n "\t" $0 }' \
    > "$WORK/cg/incl.$1"
}
profile "$FEW"
profile "$MANY"
echo "bench/feed/patch-profile.sh ($WRITE), migrations of ${BENCH_REVISION:-this tree ($(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD -- migrations || echo ', changed'))}, live wake-ups ${BENCH_WAKE_UPS:-on}, $(date -u +%Y-%m-%dT%H:%MZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| instructions a $([ "$WRITE" = post ] && echo "POST's of 100 terms" || echo "PATCH's") transaction, inclusive | function |"
echo "|---|---|"
# Not `head`: it ends the pipe early, and sort's SIGPIPE made the script exit 141 under pipefail.
awk -F'\t' -v n=$((MANY - FEW)) 'NR == FNR { a[$2] = $1; next } { d = ($1 - a[$2]) / n; if (d >= 1000) printf "%d\t%s\n", d, $2 }' \
  "$WORK/cg/incl.$FEW" "$WORK/cg/incl.$MANY" | sort -rn | awk -F'\t' -v top="$TOP" 'NR <= top { printf "| %d | `%s` |\n", $1, $2 }'
