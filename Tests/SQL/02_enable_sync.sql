-- role: owner
-- ferry.enable_sync: idempotent, refuses tables it cannot sync, and adopts
-- tables that already hold rows.

-- A fingerprint of everything enable_sync creates on the app tables.
CREATE FUNCTION pg_temp.sync_shape() RETURNS text LANGUAGE sql AS $$
    SELECT string_agg(x, ';' ORDER BY x) FROM (
        SELECT format('col %s.%s %s %s %s', a.attrelid::regclass, a.attname, format_type(a.atttypid, a.atttypmod),
                      a.attnotnull, pg_get_expr(d.adbin, d.adrelid)) AS x
          FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
         WHERE a.attrelid::regclass::text LIKE 'app.%' AND a.attnum > 0 AND NOT a.attisdropped
        UNION ALL
        SELECT format('trg %s.%s', tgrelid::regclass, tgname) FROM pg_trigger WHERE tgrelid::regclass::text LIKE 'app.%'
        UNION ALL
        SELECT format('idx %s', indexrelid::regclass) FROM pg_index WHERE indrelid::regclass::text LIKE 'app.%'
        UNION ALL
        SELECT format('reg %s %s', table_oid, enabled_at) FROM ferry.synced_tables
    ) t;
$$;

-- Calling it again on every app table changes nothing.
DO $$
DECLARE before text := pg_temp.sync_shape(); t regclass;
BEGIN
    FOR t IN SELECT table_oid FROM ferry.sync_resources WHERE schema_name = 'app' LOOP
        PERFORM ferry.enable_sync(t);
        PERFORM ferry.enable_sync(t);
    END LOOP;
    PERFORM pg_temp.check(pg_temp.sync_shape() = before, 'enable_sync twice leaves the same columns, triggers, indexes, registry');
    PERFORM pg_temp.check((SELECT count(*) FROM pg_trigger WHERE tgrelid = 'app.terms'::regclass AND tgname LIKE 'zz_ferry_%') = 7,
                          'seven ferry triggers on app.terms: the four row triggers, the INSERT''s notify statement trigger (0017; its update trigger hints an UPDATE''s rows) and the two reach checks (0022)');
    PERFORM pg_temp.check((SELECT count(*) FROM pg_trigger WHERE tgrelid = 'app.class_members'::regclass AND tgname LIKE 'zz_ferry_notify_%') = 2,
                          'a private members table keeps both notify statement triggers (its hints name owners, a query)');
    PERFORM pg_temp.check((SELECT count(*) FROM pg_trigger WHERE tgrelid = 'app.study_sets'::regclass AND tgname LIKE 'zz_ferry_reach_%') = 0,
                          'no reach check on a scope table: the revocation lists its rows (0022)');
    PERFORM pg_temp.check((SELECT array_agg(table_name::text ORDER BY table_name) FROM ferry.sync_resources WHERE schema_name = 'app')
                          = ARRAY['class_members', 'class_sets', 'classes', 'folder_sets', 'folders', 'set_collaborators', 'study_sets', 'terms'],
                          'the eight app tables are registered');
END $$;

-- Tables it cannot sync get clear errors.
CREATE SCHEMA enabletest;
CREATE TABLE enabletest.no_pk (id int, x text);
CREATE TABLE enabletest.composite (id int, k int, PRIMARY KEY (id, k));
CREATE TABLE enabletest.other_pk (key int PRIMARY KEY);
CREATE TABLE enabletest.bad_revision (id int PRIMARY KEY, revision text);
CREATE VIEW enabletest.a_view AS SELECT 1 AS id;

SELECT pg_temp.expect_error($$SELECT ferry.enable_sync('enabletest.no_pk')$$, '42P16');
SELECT pg_temp.expect_error($$SELECT ferry.enable_sync('enabletest.composite')$$, '42P16');
SELECT pg_temp.expect_error($$SELECT ferry.enable_sync('enabletest.other_pk')$$, '42P16');
SELECT pg_temp.expect_error($$SELECT ferry.enable_sync('enabletest.bad_revision')$$, '42804');
SELECT pg_temp.expect_error($$SELECT ferry.enable_sync('enabletest.a_view')$$, '42809');

-- A table with rows already in it: the rows get sync columns at once.
CREATE TABLE enabletest.existing (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, x text);
INSERT INTO enabletest.existing (x) SELECT 'row' || g FROM generate_series(1, 50) g;
SELECT ferry.enable_sync('enabletest.existing');
DO $$
BEGIN
    PERFORM pg_temp.check((SELECT count(*) FROM enabletest.existing
                            WHERE revision = 1 AND NOT is_deleted AND last_modified > 1000000000000
                              AND _ferry_field_revisions = '{}') = 50, 'existing rows adopted');
    PERFORM pg_temp.check((SELECT count(DISTINCT _ferry_xid) FROM enabletest.existing) = 1, 'existing rows share one _ferry_xid');
    PERFORM pg_temp.check((SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef
                            WHERE adrelid = 'enabletest.existing'::regclass
                              AND adnum = (SELECT attnum FROM pg_attribute WHERE attrelid = 'enabletest.existing'::regclass AND attname = '_ferry_xid'))
                          = 'pg_current_xact_id()', '_ferry_xid default is the writing transaction');
    UPDATE enabletest.existing SET x = 'changed' WHERE id = 1;
    PERFORM pg_temp.check((SELECT revision FROM enabletest.existing WHERE id = 1) = 2, 'adopted row updates to revision 2');
END $$;

-- A renamed table keeps its registration; the view shows the current name.
ALTER TABLE enabletest.existing RENAME TO renamed;
DO $$
BEGIN
    PERFORM pg_temp.check(EXISTS (SELECT 1 FROM ferry.sync_resources WHERE schema_name = 'enabletest' AND table_name = 'renamed'),
                          'sync_resources follows a rename');
END $$;
DROP TABLE enabletest.renamed;
DO $$
BEGIN
    PERFORM pg_temp.check(NOT EXISTS (SELECT 1 FROM ferry.sync_resources WHERE schema_name = 'enabletest'),
                          'a dropped table leaves sync_resources');
END $$;

SELECT 'PASS 02_enable_sync';
