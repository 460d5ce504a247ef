#!/usr/bin/env bash
# role: owner
# The generated notify functions (ferry.sync_notify_source), and the update
# triggers that hint an UPDATE's rows (ferry.sync_row_hints_source), have no SET clause
# (issue 47: saving, setting and restoring search_path cost ~12,000 instructions
# a call, and every UPDATE of a synced table calls one). Their bodies name every
# function and type with their schema, so writes under a hostile search_path
# (pg_temp and public before pg_catalog, a temporary table named `text`, and
# functions and aggregates in public named as the ones the bodies call, each of
# which raises) collect the same hints as under Ferry's path, in a fresh session
# each (PL/pgSQL resolves a function's declarations when the session first calls it).
# Run by run.sh with SQLTEST_OWNER_URL and PSQL set.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/_sessions.sh"

[ "$(q "SELECT count(*) FROM pg_proc p JOIN pg_trigger t ON t.tgfoid = p.oid
         WHERE t.tgname = 'zz_ferry_notify_insert' AND t.tgrelid::regclass::text LIKE 'app.%'
           AND p.proconfig IS NULL AND p.proname ~ '^sync_notify_[0-9]+\$'")" = 8 ] \
  || fail "every app table's notify function is made without a SET clause"

# The rows, in a session of their own: a teacher's set with a term, a class with a student.
read -r u s t k m <<<"$("$PSQL" -X -q -tA -v ON_ERROR_STOP=1 "$SQLTEST_OWNER_URL" <<'SQL'
SELECT ferry.create_user('nopath-' || gen_random_uuid(), 'nopath-password-1') AS u \gset
BEGIN;
SELECT set_config('ferry.user_id', :'u', true) AS ignored \gset
INSERT INTO app.study_sets (creator_id, title) VALUES (:'u', 'no path') RETURNING id AS s \gset
INSERT INTO app.terms (set_id, word) VALUES (:'s', 'w') RETURNING id AS t \gset
INSERT INTO app.classes (teacher_id, name) VALUES (:'u', 'no path') RETURNING id AS k \gset
INSERT INTO app.class_members (class_id, user_id)
     VALUES (:'k', ferry.create_user('nopath-s-' || gen_random_uuid(), 'nopath-password-1')) RETURNING id AS m \gset
COMMIT;
\echo :u :s :t :k :m
SQL
)"
[ -n "$m" ] || fail "the rows were not made"

# Functions and aggregates in public that an unqualified call in a notify body
# would reach before pg_catalog's: each raises.
cleanup() {
  q "DROP FUNCTION IF EXISTS public.current_setting(text, boolean), public.set_config(text, text, boolean),
       public.pg_trigger_depth(), public.strpos(text, text), public.octet_length(text), public.cardinality(text[]),
       public.pg_notify(text, text), public.unnest(text[]);
     DROP AGGREGATE IF EXISTS public.array_agg(text), public.count(uuid);
     DROP FUNCTION IF EXISTS public.nopath_text(text[], text), public.nopath_uuid(bigint, uuid);" >/dev/null 2>&1 || true
}
trap cleanup EXIT
"$PSQL" -X -q -v ON_ERROR_STOP=1 "$SQLTEST_OWNER_URL" >/dev/null <<'SQL'
CREATE FUNCTION public.current_setting(text, boolean) RETURNS text LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'public.current_setting called'; END $$;
CREATE FUNCTION public.set_config(text, text, boolean) RETURNS text LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'public.set_config called'; END $$;
CREATE FUNCTION public.pg_trigger_depth() RETURNS integer LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'public.pg_trigger_depth called'; END $$;
CREATE FUNCTION public.strpos(text, text) RETURNS integer LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'public.strpos called'; END $$;
CREATE FUNCTION public.octet_length(text) RETURNS integer LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'public.octet_length called'; END $$;
CREATE FUNCTION public.cardinality(text[]) RETURNS integer LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'public.cardinality called'; END $$;
CREATE FUNCTION public.pg_notify(text, text) RETURNS void LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'public.pg_notify called'; END $$;
CREATE FUNCTION public.unnest(text[]) RETURNS SETOF text LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'public.unnest called'; END $$;
CREATE FUNCTION public.nopath_text(text[], text) RETURNS text[] LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'public.array_agg called'; END $$;
CREATE AGGREGATE public.array_agg(text) (SFUNC = public.nopath_text, STYPE = text[]);
CREATE FUNCTION public.nopath_uuid(bigint, uuid) RETURNS bigint LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'public.count called'; END $$;
CREATE AGGREGATE public.count(uuid) (SFUNC = public.nopath_uuid, STYPE = bigint, INITCOND = '0');
SQL

# writes PREFIX: in a fresh session after PREFIX, an UPDATE and an INSERT of
# terms (a scope hint), an UPDATE of a class's member row (its members and
# owners), then an UPDATE outside collect mode (notified, nothing collected);
# prints each transaction's collected hints without their stamps, one a line.
writes() {
  "$PSQL" -X -q -tA -v ON_ERROR_STOP=1 "$SQLTEST_OWNER_URL" 2>&1 <<SQL | sed -E 's/(: |[|])[0-9]+ /\1/g'
$1
BEGIN;
SELECT pg_catalog.set_config('ferry.user_id', '$u', true) IS NULL, pg_catalog.set_config('ferry.hint_mode', 'collect', true) IS NULL;
UPDATE app.terms SET word = 'under a path' WHERE id = '$t';
INSERT INTO app.terms (set_id, word) VALUES ('$s', 'added under a path');
SELECT 'terms: ' OPERATOR(pg_catalog.||) pg_catalog.translate(pg_catalog.current_setting('ferry.hints'), E'\n', '|');
COMMIT;
BEGIN;
SELECT pg_catalog.set_config('ferry.user_id', '$u', true) IS NULL, pg_catalog.set_config('ferry.hint_mode', 'collect', true) IS NULL;
UPDATE app.class_members SET is_deleted = false WHERE id = '$m';
SELECT 'members: ' OPERATOR(pg_catalog.||) pg_catalog.translate(pg_catalog.current_setting('ferry.hints'), E'\n', '|');
COMMIT;
BEGIN;
SELECT pg_catalog.set_config('ferry.user_id', '$u', true) IS NULL, pg_catalog.set_config('ferry.hint_mode', '', true) IS NULL;
UPDATE app.terms SET word = 'notified under a path' WHERE id = '$t';
SELECT 'notified: ' OPERATOR(pg_catalog.||) COALESCE(pg_catalog.current_setting('ferry.hints', true), '');
COMMIT;
SQL
}

hostile=$(writes "CREATE TEMP TABLE text (x int);
SET search_path = pg_temp, public, pg_catalog;" || true)
plain=$(writes "" || true)
echo "$plain" | grep -q "^terms: .*s .* u $u|$" || fail "the plain writes' hints: $plain"
echo "$plain" | grep -q "^members: .* u $u|" || fail "the member row's hints: $plain"
[ "$hostile" = "$plain" ] || fail "under a hostile search_path:
$hostile
under Ferry's:
$plain"
echo "PASS 28_notify_without_search_path"
