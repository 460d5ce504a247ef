-- role: owner
-- Migration 0011: each synced table's update trigger is generated from its
-- columns, records the same field revisions as the generic comparison, falls
-- back to it when columns were added or dropped since, and is regenerated on
-- demand.

DO $$
BEGIN
    PERFORM pg_temp.check(
        (SELECT bool_and(t.tgfoid = format('ferry.sync_update_%s()', t.tgrelid::oid)::regprocedure)
           FROM pg_trigger t WHERE t.tgname = 'zz_ferry_sync_update' AND t.tgrelid::regclass::text LIKE 'app.%')
        AND (SELECT count(*) FROM pg_trigger t WHERE t.tgname = 'zz_ferry_sync_update' AND t.tgrelid::regclass::text LIKE 'app.%') = 8,
        'every app table updates through its generated function');
    PERFORM pg_temp.check(NOT has_function_privilege('ferry_app', 'ferry.refresh_sync_trigger(regclass)', 'EXECUTE')
                          AND NOT has_function_privilege('ferry_app', 'ferry.refresh_sync_triggers()', 'EXECUTE')
                          AND NOT has_function_privilege('ferry_app', 'ferry.enable_sync(regclass)', 'EXECUTE'),
                          'the app role cannot regenerate triggers or enable sync');
    PERFORM pg_temp.check(has_function_privilege('ferry_app', 'ferry.changed_fields(jsonb, jsonb, bigint)', 'EXECUTE'),
                          'any writer may run the fallback comparison');
END $$;

-- Twins: `gen` gets the generated trigger (enable_sync), `generic` keeps 0001's
-- (enable_sync_base only). The same updates must record the same revisions.
CREATE SCHEMA gentest;
CREATE TABLE gentest.gen (
    id uuid PRIMARY KEY, a text, b int, c jsonb, d json, e numeric, f timestamptz, g text[], "odd ""name""" text,
    v varchar(10), u uuid, dt date, k int8);
CREATE TABLE gentest.generic (LIKE gentest.gen INCLUDING ALL);
SELECT ferry.enable_sync('gentest.gen');
SELECT ferry.enable_sync_base('gentest.generic');
INSERT INTO gentest.gen (id) VALUES ('00000000-0000-0000-0000-000000000001');
INSERT INTO gentest.generic (id) VALUES ('00000000-0000-0000-0000-000000000001');

CREATE FUNCTION pg_temp.both(p_set text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE g jsonb; r jsonb;
BEGIN
    EXECUTE format('UPDATE gentest.gen SET %s', p_set);
    EXECUTE format('UPDATE gentest.generic SET %s', p_set);
    SELECT _ferry_field_revisions INTO g FROM gentest.gen;
    SELECT _ferry_field_revisions INTO r FROM gentest.generic;
    PERFORM pg_temp.check(g = r, format('SET %s: generated %s, generic %s', p_set, g, r));
END $$;

DO $$
BEGIN
    PERFORM pg_temp.check(
        (SELECT tgfoid FROM pg_trigger WHERE tgrelid = 'gentest.gen'::regclass AND tgname = 'zz_ferry_sync_update')
          = format('ferry.sync_update_%s()', 'gentest.gen'::regclass::oid)::regprocedure
        AND (SELECT tgfoid FROM pg_trigger WHERE tgrelid = 'gentest.generic'::regclass AND tgname = 'zz_ferry_sync_update')
          = 'ferry.sync_before_update()'::regprocedure,
        'gen is generated, generic is not');
    PERFORM pg_temp.both($s$a = 'x'$s$);
    PERFORM pg_temp.both($s$a = 'x'$s$);                          -- no change: nothing recorded
    PERFORM pg_temp.both($s$b = 1, c = '{"k": 1}'$s$);
    PERFORM pg_temp.both($s$d = '[1, 2]'$s$);                     -- json has no equality operator
    PERFORM pg_temp.both($s$d = '[1,  2]'$s$);
    PERFORM pg_temp.both($s$e = 1.0$s$);
    PERFORM pg_temp.both($s$e = 1.00$s$);
    PERFORM pg_temp.both($s$f = '2026-01-01 00:00:00+00'$s$);
    PERFORM pg_temp.both($s$g = '{a,b}', c = NULL$s$);
    PERFORM pg_temp.both($s$"odd ""name""" = 'y'$s$);
    PERFORM pg_temp.both($s$is_deleted = true$s$);
    PERFORM pg_temp.check((SELECT revision FROM gentest.gen) = 12 AND (SELECT _ferry_field_revisions ->> 'd' FROM gentest.gen) = '5',
                          'revisions bumped on every update, d recorded at its last change');
    -- Compared as text (issue 47): strings, integers, booleans, uuids, dates.
    PERFORM pg_temp.both($s$v = 'x', u = '00000000-0000-0000-0000-00000000000a', dt = '2026-01-01', k = 1$s$);
    PERFORM pg_temp.both($s$v = 'x', u = '00000000-0000-0000-0000-00000000000A', dt = '2026-01-01', k = 1$s$);
    PERFORM pg_temp.both($s$v = 'x ', dt = '2026-01-02', k = 2, a = 'X'$s$);
    PERFORM pg_temp.both($s$u = NULL, k = NULL, is_deleted = false$s$);
    PERFORM pg_temp.expect_error($s$UPDATE gentest.gen SET id = '00000000-0000-0000-0000-000000000002'$s$, '42501');
END $$;

-- A column added since generation is still recorded (the fallback), and so is
-- everything else after a column was dropped.
ALTER TABLE gentest.gen ADD COLUMN h text;
ALTER TABLE gentest.generic ADD COLUMN h text;
SELECT pg_temp.both($s$h = 'new'$s$);
ALTER TABLE gentest.gen DROP COLUMN b;
ALTER TABLE gentest.generic DROP COLUMN b;
SELECT pg_temp.both($s$a = 'after drop', h = 'again'$s$);

-- Regenerated: the source knows h and not b, and records the same.
SELECT ferry.refresh_sync_trigger('gentest.gen');
DO $$
DECLARE src text := (SELECT prosrc FROM pg_proc WHERE oid = format('ferry.sync_update_%s()', 'gentest.gen'::regclass::oid)::regprocedure);
BEGIN
    PERFORM pg_temp.check(src ~ 'NEW\.h\M' AND src !~ 'NEW\.b\M', 'regenerated from the current columns');
    PERFORM pg_temp.both($s$h = 'fast', e = 2$s$);
END $$;

-- A renamed column cannot be seen from inside the trigger: updates fail loudly
-- (never record under the old name) until the trigger is regenerated.
ALTER TABLE gentest.gen RENAME COLUMN a TO a2;
ALTER TABLE gentest.generic RENAME COLUMN a TO a2;
SELECT pg_temp.expect_error($s$UPDATE gentest.gen SET a2 = 'renamed'$s$, '42703');
SELECT ferry.refresh_sync_trigger('gentest.gen');
SELECT pg_temp.both($s$a2 = 'renamed'$s$);

-- Regenerating an unchanged table replaces nothing (no lock on the table).
DO $$
DECLARE fn regprocedure := format('ferry.sync_update_%s()', 'gentest.gen'::regclass::oid)::regprocedure;
        before xid := (SELECT xmin FROM pg_proc WHERE oid = fn);
        trigger_before xid := (SELECT xmin FROM pg_trigger WHERE tgrelid = 'gentest.gen'::regclass AND tgname = 'zz_ferry_sync_update');
BEGIN
    PERFORM ferry.refresh_sync_trigger('gentest.gen');
    PERFORM ferry.refresh_sync_triggers();
    PERFORM pg_temp.check((SELECT xmin FROM pg_proc WHERE oid = fn) = before
                          AND (SELECT xmin FROM pg_trigger WHERE tgrelid = 'gentest.gen'::regclass AND tgname = 'zz_ferry_sync_update') = trigger_before,
                          'an up-to-date trigger and function are left alone');
END $$;


-- A dropped table's generated function goes with the next refresh.
DO $$
DECLARE fn text := format('sync_update_%s', 'gentest.gen'::regclass::oid);
BEGIN
    DROP TABLE gentest.gen;
    PERFORM ferry.refresh_sync_triggers();
    PERFORM pg_temp.check(NOT EXISTS (SELECT 1 FROM pg_proc WHERE pronamespace = 'ferry'::regnamespace AND proname = fn),
                          'the orphaned generated function is dropped');
END $$;

-- The generated update trigger takes the transaction's stamp inline (issue 47):
-- every statement of ferry.take_stamp()'s body is in it, so the two cannot drift.
DO $$
DECLARE
    v_generated text := (SELECT p.prosrc FROM pg_proc p WHERE p.oid = format('ferry.sync_update_%s()', 'app.terms'::regclass::oid)::regprocedure);
    v_body text := (SELECT p.prosrc FROM pg_proc p WHERE p.oid = 'ferry.take_stamp()'::regprocedure);
    v_line text;
    v_lines int := 0;
BEGIN
    PERFORM pg_temp.check(position('pg_current_xact_id()' IN v_generated) > 0
                          AND regexp_replace(v_generated, '--[^\n]*', '', 'g') !~ '(take_stamp|ferry\.stamp)\(',
                          'the update trigger takes its stamp without calling ferry.take_stamp()');
    FOR v_line IN
        SELECT btrim(replace(l, 'pg_catalog.', '')) FROM unnest(string_to_array(split_part(split_part(v_body, E'\nBEGIN\n', 2), 'RETURN v_stamp;', 1), E'\n')) l
         WHERE btrim(l) <> '' AND btrim(l) NOT LIKE '--%'
    LOOP
        PERFORM pg_temp.check(position(v_line IN replace(v_generated, 'pg_catalog.', '')) > 0, 'take_stamp''s line is in the update trigger: ' || v_line);
        v_lines := v_lines + 1;
    END LOOP;
    PERFORM pg_temp.check(v_lines >= 6, 'take_stamp''s body was read: ' || v_lines || ' lines');
END $$;

-- No SET search_path on the generated update trigger (issue 47: a save and restore
-- of the setting on every call): it names everything with its schema, so an update
-- under a search_path without ferry, and with pg_temp first, stamps and counts as before.
CREATE TABLE gentest.paths (id uuid PRIMARY KEY, a text);
SELECT ferry.enable_sync('gentest.paths');
INSERT INTO gentest.paths (id) VALUES ('00000000-0000-0000-0000-000000000001');
CREATE TEMP TABLE text (x int);
SET search_path = pg_temp, public, pg_catalog;
UPDATE gentest.paths SET a = 'under another path';
RESET search_path;
DO $$
BEGIN
    PERFORM pg_temp.check((SELECT p.proconfig FROM pg_proc p WHERE p.oid = format('ferry.sync_update_%s()', 'gentest.paths'::regclass::oid)::regprocedure) IS NULL,
                          'the generated update trigger has no SET clause');
    PERFORM pg_temp.check((SELECT (_ferry_field_revisions ->> 'a')::int = revision AND _ferry_xid IS NOT NULL
                             FROM gentest.paths WHERE a = 'under another path'), 'the update under another search_path was counted');
END $$;
DROP TABLE pg_temp.text;

DROP SCHEMA gentest CASCADE;
SELECT 'PASS';
