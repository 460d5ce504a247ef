-- role: owner
-- The sync columns are maintained by the database whoever writes: revision,
-- last_modified, _ferry_xid, _ferry_field_revisions, and soft deletes.

CREATE SCHEMA synctest;
CREATE TABLE synctest.items (id int PRIMARY KEY, title text, body text, n int);
SELECT ferry.enable_sync('synctest.items');

-- Insert: revision 1, now, not deleted, no field revisions, stamped with the writer's xid.
DO $$
DECLARE r synctest.items;
BEGIN
    INSERT INTO synctest.items (id, title, body, n) VALUES (1, 'a', 'b', 1) RETURNING * INTO r;
    PERFORM pg_temp.check(r.revision = 1, 'insert: revision 1');
    PERFORM pg_temp.check(abs(r.last_modified - floor(extract(epoch FROM clock_timestamp()) * 1000)) < 5000, 'insert: last_modified is now in ms');
    PERFORM pg_temp.check(NOT r.is_deleted, 'insert: not deleted');
    PERFORM pg_temp.check(r._ferry_field_revisions = '{}', 'insert: no field revisions');
    PERFORM pg_temp.check(r._ferry_xid = pg_current_xact_id(), 'insert: _ferry_xid is the writer''s xact id');
END $$;

-- Insert with forged bookkeeping: overridden.
DO $$
DECLARE r synctest.items;
BEGIN
    INSERT INTO synctest.items (id, title, revision, last_modified, _ferry_xid, _ferry_field_revisions)
         VALUES (2, 'forged', 99, 5, '3', '{"title": 50}') RETURNING * INTO r;
    PERFORM pg_temp.check(r.revision = 1, 'forged insert: revision 1, not 99');
    PERFORM pg_temp.check(r.last_modified > 1000000000000, 'forged insert: last_modified is now, not 5');
    PERFORM pg_temp.check(r._ferry_xid = pg_current_xact_id(), 'forged insert: _ferry_xid is the writer''s');
    PERFORM pg_temp.check(r._ferry_field_revisions = '{}', 'forged insert: field revisions reset');
END $$;

-- Updates: +1 per change, field revisions record exactly the changed columns.
DO $$
DECLARE r0 synctest.items; r1 synctest.items; r2 synctest.items; r3 synctest.items; r4 synctest.items;
BEGIN
    SELECT * INTO r0 FROM synctest.items WHERE id = 1;
    UPDATE synctest.items SET title = 'a2' WHERE id = 1 RETURNING * INTO r1;
    PERFORM pg_temp.check(r1.revision = 2, 'update: revision 2');
    PERFORM pg_temp.check(r1.last_modified > r0.last_modified, 'update: last_modified increases');
    PERFORM pg_temp.check(r1._ferry_field_revisions = '{"title": 2}', 'update: field revisions ' || r1._ferry_field_revisions::text);
    PERFORM pg_temp.check(r1._ferry_xid = pg_current_xact_id(), 'update: _ferry_xid is the writer''s');

    -- Two more updates in the same millisecond still move last_modified forward.
    UPDATE synctest.items SET body = 'b2', n = 2 WHERE id = 1 RETURNING * INTO r2;
    PERFORM pg_temp.check(r2.revision = 3, 'second update: revision 3');
    PERFORM pg_temp.check(r2.last_modified > r1.last_modified, 'second update: last_modified strictly increases');
    PERFORM pg_temp.check(r2._ferry_field_revisions = '{"title": 2, "body": 3, "n": 3}',
                          'second update: field revisions ' || r2._ferry_field_revisions::text);

    -- Same values: a new revision, but no field changed.
    UPDATE synctest.items SET title = 'a2', n = 2 WHERE id = 1 RETURNING * INTO r3;
    PERFORM pg_temp.check(r3.revision = 4, 'no-op update: revision 4');
    PERFORM pg_temp.check(r3._ferry_field_revisions = r2._ferry_field_revisions, 'no-op update: field revisions unchanged');

    -- NULL to value and value to NULL both count as changes.
    UPDATE synctest.items SET body = NULL WHERE id = 1 RETURNING * INTO r4;
    PERFORM pg_temp.check(r4._ferry_field_revisions = '{"title": 2, "body": 5, "n": 3}',
                          'null update: field revisions ' || r4._ferry_field_revisions::text);
END $$;

-- A writer cannot forge revision, last_modified, _ferry_xid or field revisions.
DO $$
DECLARE r0 synctest.items; r1 synctest.items;
BEGIN
    SELECT * INTO r0 FROM synctest.items WHERE id = 1;
    UPDATE synctest.items
       SET revision = 99, last_modified = 0, _ferry_xid = '5', _ferry_field_revisions = '{"title": 1000}'
     WHERE id = 1 RETURNING * INTO r1;
    PERFORM pg_temp.check(r1.revision = r0.revision + 1, 'forged update: revision is old + 1, got ' || r1.revision);
    PERFORM pg_temp.check(r1.last_modified > r0.last_modified, 'forged update: last_modified still increases');
    PERFORM pg_temp.check(r1._ferry_xid = pg_current_xact_id(), 'forged update: _ferry_xid is the writer''s');
    PERFORM pg_temp.check(r1._ferry_field_revisions = r0._ferry_field_revisions, 'forged update: field revisions kept');

    -- A far-future last_modified cannot be forged either, so monotonicity stays honest.
    UPDATE synctest.items SET last_modified = 9000000000000 WHERE id = 1 RETURNING * INTO r1;
    PERFORM pg_temp.check(r1.last_modified < 9000000000000, 'forged future last_modified ignored');
END $$;

-- _ferry_xid follows commit order: a later transaction's write has a larger stamp.
DO $$
BEGIN
    PERFORM set_config('synctest.prev_xid', (SELECT _ferry_xid::text FROM synctest.items WHERE id = 1), false);
END $$;
UPDATE synctest.items SET n = 3 WHERE id = 1;
DO $$
BEGIN
    PERFORM pg_temp.check((SELECT _ferry_xid FROM synctest.items WHERE id = 1) > current_setting('synctest.prev_xid')::xid8,
                          'a later transaction stamps a larger _ferry_xid');
    -- Within 5 s: a transaction of another suite sharing the cluster that ends
    -- between a frontier's snapshot and its look holds that one computation.
    FOR i IN 1..100 LOOP
        EXIT WHEN (SELECT _ferry_xid FROM synctest.items WHERE id = 1) < ferry.feed_frontier();
        PERFORM pg_sleep(0.05);
    END LOOP;
    PERFORM pg_temp.check((SELECT _ferry_xid FROM synctest.items WHERE id = 1) < ferry.feed_frontier(),
                          'a committed write is below the feed''s frontier');
END $$;

-- The id of a synced row cannot change.
DO $$
BEGIN
    BEGIN
        UPDATE synctest.items SET id = 100 WHERE id = 1;
        RAISE EXCEPTION 'changing id was allowed';
    EXCEPTION WHEN insufficient_privilege THEN NULL;
    END;
END $$;

-- A hard DELETE becomes a soft delete; deleting again is a no-op.
DO $$
DECLARE r0 synctest.items; r1 synctest.items; n bigint;
BEGIN
    SELECT * INTO r0 FROM synctest.items WHERE id = 2;
    DELETE FROM synctest.items WHERE id = 2;
    GET DIAGNOSTICS n = ROW_COUNT;
    PERFORM pg_temp.check(n = 0, 'soft delete reports no deleted row');
    SELECT * INTO r1 FROM synctest.items WHERE id = 2;
    PERFORM pg_temp.check(r1.id = 2, 'row still there after DELETE');
    PERFORM pg_temp.check(r1.is_deleted, 'row is a tombstone');
    PERFORM pg_temp.check(r1.revision = r0.revision + 1, 'delete bumps revision');
    PERFORM pg_temp.check(r1.last_modified > r0.last_modified, 'delete bumps last_modified');
    PERFORM pg_temp.check(r1._ferry_xid = pg_current_xact_id(), 'delete stamps _ferry_xid');
    PERFORM pg_temp.check(r1._ferry_field_revisions = jsonb_build_object('is_deleted', r1.revision),
                          'delete records is_deleted in field revisions: ' || r1._ferry_field_revisions::text);

    DELETE FROM synctest.items WHERE id = 2;
    PERFORM pg_temp.check((SELECT revision FROM synctest.items WHERE id = 2) = r1.revision,
                          'deleting a tombstone again changes nothing');
END $$;

-- The same on an app table (terms of a set), with a plain DELETE of many rows.
DO $$
DECLARE u uuid; s uuid;
BEGIN
    u := ferry.create_user('sync_owner', 'pw');
    INSERT INTO app.study_sets (creator_id, title) VALUES (u, 'set') RETURNING id INTO s;
    INSERT INTO app.terms (set_id, word) SELECT s, 'w' || g FROM generate_series(1, 3) g;
    DELETE FROM app.terms WHERE set_id = s;
    PERFORM pg_temp.check((SELECT count(*) FROM app.terms WHERE set_id = s AND is_deleted AND revision = 2) = 3,
                          'DELETE on app.terms leaves three tombstones at revision 2');
    DELETE FROM app.study_sets WHERE id = s;
    PERFORM pg_temp.check((SELECT is_deleted FROM app.study_sets WHERE id = s), 'DELETE on a set with children is soft too');
END $$;

-- TRUNCATE would hide deletes: refused.
DO $$
BEGIN
    BEGIN
        TRUNCATE synctest.items;
        RAISE EXCEPTION 'TRUNCATE was allowed';
    EXCEPTION WHEN object_not_in_prerequisite_state THEN NULL;
    END;
END $$;

-- Hidden columns exist on every app table; introspection hides the _ferry_ prefix.
DO $$
BEGIN
    PERFORM pg_temp.check((SELECT count(*) FROM pg_attribute a JOIN ferry.sync_resources s ON a.attrelid = s.table_oid
                            WHERE s.schema_name = 'app' AND a.attname IN ('revision', 'last_modified', 'is_deleted', '_ferry_xid', '_ferry_field_revisions')
                              AND a.attnotnull) = 40,
                          'eight app tables with the five sync columns, NOT NULL');
END $$;

SELECT 'PASS 01_sync_columns';
