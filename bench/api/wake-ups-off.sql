-- bench/api/wake-ups-off.sql: the live wake-ups off, for a benchmark's "off" (issue 47 item 4):
-- no hint made anywhere. The update triggers made again without their hints
-- (ferry.sync_row_hints_source answering NULL), every synced table's NOTIFY triggers
-- (zz_ferry_notify_*) disabled, the row mark and row hints functions dropped, so that a serve
-- process, told by the schema notice, finds no table that takes its hints (SchemaIntrospector's
-- row_hints): its one-row UPDATE then marks no row, returns no stamp and makes no hints.
-- bench/api/api.sh's wake_ups off and bench/feed/patch-profile.sh's BENCH_WAKE_UPS=off run it as
-- the owner; `ferry migrate` (or api.sh's wake_ups on) makes everything again.
CREATE OR REPLACE FUNCTION ferry.sync_row_hints_source(p_table regclass) RETURNS text[]
    LANGUAGE sql STABLE AS 'SELECT NULL::text[]';
SELECT ferry.refresh_sync_triggers();
DO $$ DECLARE t record; f regprocedure; BEGIN
    FOR t IN SELECT tg.tgrelid::regclass AS rel, tg.tgname FROM pg_trigger tg
              WHERE tg.tgname LIKE 'zz_ferry_notify_%' AND NOT tg.tgisinternal LOOP
        EXECUTE format('ALTER TABLE %s DISABLE TRIGGER %I', t.rel, t.tgname);
    END LOOP;
    FOR f IN SELECT p.oid::regprocedure FROM pg_proc p
              WHERE p.pronamespace = 'ferry'::regnamespace AND p.proname ~ '^sync_(hints|mark)_[0-9]+$' LOOP
        EXECUTE format('DROP FUNCTION %s', f);
    END LOOP;
    PERFORM pg_notify('ferry_schema', '');
END $$;
