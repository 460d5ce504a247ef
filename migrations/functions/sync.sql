-- functions/sync.sql: Synced tables: ferry.enable_sync, the sync columns' triggers, and the generators of each table's update and reach triggers.
--
-- A repeatable file (migrations/README.md): the current definition of each of its
-- functions, triggers and policies, applied by `ferry migrate` after the versioned
-- files whenever its checksum differs from the one recorded in
-- ferry.schema_repeatables. Change a function here, never in a new versioned file.
-- Every statement must be safe to run again on a database that already has it.
-- Each function keeps the comment of the versioned file that last defined it.

-- Milliseconds since the Unix epoch, from the wall clock (not the transaction start).
-- (Versioned definitions before this file: 0001.)
CREATE OR REPLACE FUNCTION ferry.now_ms()
 RETURNS bigint
 LANGUAGE sql
 PARALLEL SAFE
RETURN (floor((EXTRACT(epoch FROM clock_timestamp()) * (1000)::numeric)))::bigint;
GRANT EXECUTE ON FUNCTION ferry.now_ms() TO PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.now_ms() TO ferry_app;

-- A column's type and, for a domain, the types under it, down to its base type (a
-- domain over a domain over integer: the two domains, then integer), each with its
-- typmod (a domain's is the one it gives the type under it) and its depth (0: the
-- column's type). A domain's CHECK is on one of these types; its error names no
-- table nor column (ferry.constraint_columns, Ferry's introspection).
CREATE OR REPLACE FUNCTION ferry.type_chain(p_type oid, p_typmod integer)
 RETURNS TABLE (type oid, typmod integer, depth integer)
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
    WITH RECURSIVE d (type, typmod, depth) AS (
        SELECT p_type, p_typmod, 0
        UNION ALL
        SELECT t.typbasetype, t.typtypmod, d.depth + 1
          FROM pg_type t JOIN d ON t.oid = d.type
         WHERE t.typtype = 'd' AND d.depth < 32)
    SELECT d.type, d.typmod, d.depth FROM d;
$function$;
REVOKE ALL ON FUNCTION ferry.type_chain(oid,integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.type_chain(oid,integer) TO ferry_app;

-- The type a column's values are: the end of ferry.type_chain (a domain over varchar(8):
-- varchar, 8+4; any type but a domain: itself). Ferry types a domain column by it: the
-- JSON it takes, how the update trigger compares it, how a filter reads its value. The
-- domain's constraints still hold when a value is stored.
CREATE OR REPLACE FUNCTION ferry.base_type(p_type oid, p_typmod integer, OUT base_type oid, OUT base_typmod integer)
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
    SELECT c.type, c.typmod FROM ferry.type_chain(p_type, p_typmod) c ORDER BY c.depth DESC LIMIT 1;
$function$;
REVOKE ALL ON FUNCTION ferry.base_type(oid,integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.base_type(oid,integer) TO ferry_app;

-- Every place that stamped with pg_current_xact_id() now stamps with
-- ferry.stamp(): the generic triggers (0018's bodies), the generators of each
-- table's update and notify functions (wrapped, as 0018 wrapped 0011's), the
-- access-log hint (0028), and the logs' defaults.
-- (Versioned definitions before this file: 0001, 0018, 0032.)
CREATE OR REPLACE FUNCTION ferry.sync_before_insert()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    NEW.revision := 1;
    NEW.last_modified := ferry.now_ms();
    NEW._ferry_xid := ferry.stamp();
    NEW._ferry_writer := ferry.current_user_id();
    NEW._ferry_field_revisions := '{}'::jsonb;
    NEW.is_deleted := coalesce(NEW.is_deleted, false);
    RETURN NEW;
END
$function$;
REVOKE ALL ON FUNCTION ferry.sync_before_insert() FROM PUBLIC;

-- 0001's generic update trigger (what a table keeps when its generated one
-- cannot be made), now also stamping the writer.
-- (Versioned definitions before this file: 0001, 0018, 0032; the comment is 0018's.)
CREATE OR REPLACE FUNCTION ferry.sync_before_update()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    IF NEW.id IS DISTINCT FROM OLD.id THEN
        RAISE EXCEPTION USING ERRCODE = '42501',
            MESSAGE = format('the id of a synced row cannot change (%s)', TG_RELID::regclass);
    END IF;
    NEW.revision := OLD.revision + 1;
    NEW.last_modified := greatest(ferry.now_ms(), OLD.last_modified + 1);
    NEW._ferry_xid := ferry.stamp();
    NEW._ferry_writer := ferry.current_user_id();
    NEW._ferry_field_revisions := OLD._ferry_field_revisions
        || ferry.changed_fields(to_jsonb(NEW), to_jsonb(OLD), NEW.revision);
    RETURN NEW;
END
$function$;
REVOKE ALL ON FUNCTION ferry.sync_before_update() FROM PUBLIC;

-- BEFORE DELETE: a hard DELETE from anywhere becomes a soft delete, so the
-- changes feed sees it. Only purging (ferry.purging = on) really deletes; it
-- then remembers the highest purged _ferry_xid of the transaction (cascaded
-- child rows included) for ferry.purge_tombstones.
-- (Versioned definitions before this file: 0001.)
CREATE OR REPLACE FUNCTION ferry.sync_before_delete()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_max text;
BEGIN
    IF current_setting('ferry.purging', true) = 'on' THEN
        v_max := NULLIF(current_setting('ferry.purged_xid', true), '');
        IF v_max IS NULL OR OLD._ferry_xid > v_max::xid8 THEN
            PERFORM set_config('ferry.purged_xid', OLD._ferry_xid::text, true);
        END IF;
        RETURN OLD;
    END IF;
    EXECUTE format('UPDATE %s SET is_deleted = true WHERE id = $1 AND NOT is_deleted', TG_RELID::regclass)
      USING OLD.id;
    RETURN NULL;
END
$function$;
REVOKE ALL ON FUNCTION ferry.sync_before_delete() FROM PUBLIC;

-- BEFORE TRUNCATE: a truncate would vanish rows behind the changes feed's back.
-- (Versioned definitions before this file: 0001.)
CREATE OR REPLACE FUNCTION ferry.sync_before_truncate()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    IF current_setting('ferry.purging', true) = 'on' THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION USING ERRCODE = '55000',
        MESSAGE = format('%s is synced: TRUNCATE would hide deletes from clients', TG_RELID::regclass),
        HINT = 'Delete rows (they become tombstones), or SET ferry.purging = on to really remove them.';
END
$function$;
REVOKE ALL ON FUNCTION ferry.sync_before_truncate() FROM PUBLIC;

-- Makes a table a sync resource (see ferry.enable_sync_base), with its
-- generated update trigger. Idempotent.
-- (Versioned definitions before this file: 0001, 0011.)
CREATE OR REPLACE FUNCTION ferry.enable_sync(p_table regclass)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    PERFORM ferry.enable_sync_base(p_table);
    PERFORM ferry.refresh_sync_trigger(p_table);
END
$function$;
REVOKE ALL ON FUNCTION ferry.enable_sync(regclass) FROM PUBLIC;

-- The generic comparison: the fields (all but id, revision, last_modified and
-- the hidden _ferry_* columns) whose values differ between two jsonb rows,
-- each mapped to p_revision.
-- (Versioned definitions before this file: 0011.)
CREATE OR REPLACE FUNCTION ferry.changed_fields(p_new jsonb, p_old jsonb, p_revision bigint)
 RETURNS jsonb
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
 SET search_path TO 'pg_catalog', 'pg_temp'
RETURN (SELECT COALESCE(jsonb_object_agg(n.key, changed_fields.p_revision), '{}'::jsonb) AS "coalesce" FROM jsonb_each(changed_fields.p_new) n(key, value) WHERE ((n.key <> ALL (ARRAY['id'::text, 'revision'::text, 'last_modified'::text])) AND ("left"(n.key, 7) <> '_ferry_'::text) AND (n.value IS DISTINCT FROM (changed_fields.p_old -> n.key))));
GRANT EXECUTE ON FUNCTION ferry.changed_fields(jsonb,jsonb,bigint) TO PUBLIC;

-- The body of p_table's generated update trigger, from its current columns:
-- 0011's, with the writer (0018) and the writer's stamp in place of the
-- transaction id (0032). Until this file those two were replace() calls over
-- 0011's body kept under other names (sync_update_source_0011, _0018); this is
-- their output, generated in one place. The stamp is ferry.stamp() spelled
-- out, with ferry.take_stamp()'s body inline (issue 47): a one-row PATCH is one
-- transaction, so it took the stamp in a second PL/pgSQL call every time
-- (~57 µs in bench/feed/trigger-time.sh). ferry.take_stamp() keeps it for
-- every other writer; a change to one is a change to both. For the tables with a
-- row mark function it also hints the row (ferry.sync_row_hints_source, issue 47
-- stop 22: their UPDATE has no notify statement trigger).
-- (Versioned definitions before this file: 0011, 0018, 0032.)
CREATE OR REPLACE FUNCTION ferry.sync_update_source(p_table regclass)
 RETURNS text
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_natts int;
    v_present text := '';
    v_compare text;
    v_hints text[];
    v_col record;
BEGIN
    SELECT c.relnatts INTO v_natts FROM pg_class c WHERE c.oid = p_table;
    -- The fields, as ferry.changed_fields picks them from to_jsonb(row).
    FOR v_col IN
        SELECT a.attname::text AS name, a.attnum
          FROM pg_attribute a
         WHERE a.attrelid = p_table AND a.attnum > 0 AND NOT a.attisdropped
           AND a.attname NOT IN ('id', 'revision', 'last_modified')
           AND left(a.attname, 7) <> '_ferry_'
         ORDER BY a.attnum
    LOOP
        v_present := v_present || format(E'\n       AND pg_catalog.has_column_privilege(TG_RELID, %s::pg_catalog.int2, %L) IS NOT NULL',
                                         v_col.attnum, 'SELECT');
    END LOOP;
    -- One expression for every field (issue 47): PL/pgSQL sets up each expression of a
    -- trigger again in every transaction (~3,500 instructions before it runs), and a
    -- one-row PATCH is one transaction, so an IF per field cost more than comparing.
    -- A field that did not change maps to NULL, which jsonb_strip_nulls drops; at most
    -- 50 pairs a jsonb_build_object (PostgreSQL's 100 arguments), joined with ||.
    -- A field of a type whose text is its value (each value one text, each text one
    -- value: integers, booleans, uuids, dates, strings) is compared as text, in
    -- collation "C" (byte for byte, as jsonb compares strings): one function call
    -- instead of three (issue 47); so is a domain over one of them (its text is its base
    -- type's). Any other type through to_jsonb, as
    -- ferry.changed_fields compares it (numeric 1.0 and 1.00 are equal there, json
    -- has no equality). A cast to text exists for every type, so the expression
    -- plans whatever a column's type is by then.
    SELECT string_agg(format(E'pg_catalog.jsonb_build_object(%s)', pairs), E'\n            || ' ORDER BY chunk) INTO v_compare
      FROM (SELECT (n - 1) / 50 AS chunk,
                   string_agg(CASE WHEN as_text
                       THEN format(E'\n                %1$L, CASE WHEN NEW.%2$I::pg_catalog.text COLLATE pg_catalog."C" IS DISTINCT FROM OLD.%2$I::pg_catalog.text COLLATE pg_catalog."C" THEN NEW.revision END',
                                   name, name)
                       ELSE format(E'\n                %1$L, CASE WHEN pg_catalog.to_jsonb(NEW.%2$I) IS DISTINCT FROM pg_catalog.to_jsonb(OLD.%2$I) THEN NEW.revision END',
                                   name, name) END, ',' ORDER BY n) AS pairs
              FROM (SELECT a.attname::text AS name, row_number() OVER (ORDER BY a.attnum) AS n,
                           (ferry.base_type(a.atttypid, a.atttypmod)).base_type
                             IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype, 'bool'::regtype, 'uuid'::regtype,
                                 'date'::regtype, 'text'::regtype, 'varchar'::regtype) AS as_text
                      FROM pg_attribute a
                     WHERE a.attrelid = p_table AND a.attnum > 0 AND NOT a.attisdropped
                       AND a.attname NOT IN ('id', 'revision', 'last_modified')
                       AND left(a.attname, 7) <> '_ferry_') f
             GROUP BY (n - 1) / 50) c;
    -- Its live hints, for the tables that have no UPDATE statement trigger (functions/live.sql).
    v_hints := ferry.sync_row_hints_source(p_table);
    v_compare := format(E'\n        NEW._ferry_field_revisions := OLD._ferry_field_revisions\n'
                        '            || pg_catalog.jsonb_strip_nulls(%s);', coalesce(v_compare, E'\'{}\'::pg_catalog.jsonb'));
    RETURN format($body$
-- Generated by ferry.refresh_sync_trigger for the table with oid %1$s (%2$s attribute numbers); do not edit.
DECLARE
    v_stamp pg_catalog.xid8 := nullif(pg_catalog.current_setting('ferry.stamp', true), '')::pg_catalog.xid8;
    v_xid pg_catalog.xid8;
    v_void pg_catalog.text;%6$s
BEGIN
    IF NEW.id IS DISTINCT FROM OLD.id THEN
        RAISE EXCEPTION USING ERRCODE = '42501',
            MESSAGE = pg_catalog.format('the id of a synced row cannot change (%%s)', TG_RELID::pg_catalog.regclass);
    END IF;
    NEW.revision := OLD.revision + 1;
    NEW.last_modified := greatest(ferry.now_ms(), OLD.last_modified + 1);
    IF v_stamp IS NULL THEN
        -- ferry.take_stamp(), inline (keep the two alike): the transaction's first synced write.
        -- Assignments, not PERFORM: an assignment is a simple expression, a PERFORM a query.
        v_xid := pg_catalog.pg_current_xact_id();
        v_void := pg_catalog.pg_advisory_xact_lock_shared(1181905529, ferry.stamp_key(v_xid));
        v_stamp := greatest(v_xid, coalesce(pg_catalog.pg_sequence_last_value('ferry.stamp_floor'), 0)::pg_catalog.text::pg_catalog.xid8);
        IF v_stamp > v_xid
           AND coalesce(pg_catalog.pg_sequence_last_value('ferry.stamp_floor_taken'), 0) < v_stamp::pg_catalog.text::pg_catalog.int8 THEN
            v_void := pg_catalog.setval('ferry.stamp_floor_taken', v_stamp::pg_catalog.text::pg_catalog.int8);
        END IF;
        v_void := pg_catalog.set_config('ferry.stamp', v_stamp::pg_catalog.text, true);
    END IF;
    NEW._ferry_xid := v_stamp;
    NEW._ferry_writer := ferry.current_user_id();
    -- No column added since generation, none of these dropped: compare them.
    IF pg_catalog.has_column_privilege(TG_RELID, %3$s::pg_catalog.int2, 'SELECT') IS NULL%4$s THEN%5$s
    ELSE
        NEW._ferry_field_revisions := OLD._ferry_field_revisions
            || ferry.changed_fields(pg_catalog.to_jsonb(NEW), pg_catalog.to_jsonb(OLD), NEW.revision);
    END IF;%7$s
    RETURN NEW;
END
$body$, p_table::oid, v_natts, v_natts + 1, v_present, v_compare, coalesce(v_hints[1], ''), coalesce(v_hints[2], ''));
END
$function$;
REVOKE ALL ON FUNCTION ferry.sync_update_source(regclass) FROM PUBLIC;
-- Retired: the steps of the old chain (dropped once nothing calls them).
DROP FUNCTION IF EXISTS ferry.sync_update_source_0018(regclass);
DROP FUNCTION IF EXISTS ferry.sync_update_source_0011(regclass);

-- 0017's per-table refresh, now also generating the reach check.
-- (Versioned definitions before this file: 0011, 0017, 0022.)
CREATE OR REPLACE FUNCTION ferry.refresh_sync_trigger(p_table regclass)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    PERFORM ferry.refresh_sync_update_trigger(p_table);
    PERFORM ferry.refresh_sync_notify(p_table);
    PERFORM ferry.refresh_sync_reach(p_table);
END
$function$;
REVOKE ALL ON FUNCTION ferry.refresh_sync_trigger(regclass) FROM PUBLIC;

-- 0011's refresh of every synced table, now also dropping generated notify
-- functions no trigger uses (and row hints functions of tables without one) and announcing the schema change to every instance.
-- (Versioned definitions before this file: 0011, 0017.)
CREATE OR REPLACE FUNCTION ferry.refresh_sync_triggers()
 RETURNS integer
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_table regclass;
    v_stale regprocedure;
    v_count int := 0;
BEGIN
    FOR v_table IN
        SELECT s.table_oid FROM ferry.synced_tables s
         WHERE EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = s.table_oid)
           AND has_table_privilege(s.table_oid, 'TRIGGER')
         ORDER BY s.table_oid::oid
    LOOP
        PERFORM ferry.refresh_sync_trigger(v_table);
        v_count := v_count + 1;
    END LOOP;
    FOR v_stale IN
        SELECT p.oid::regprocedure FROM pg_proc p
         WHERE p.pronamespace = 'ferry'::regnamespace AND p.proname ~ '^sync_(update|notify)_[0-9]+$'
           AND NOT EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgfoid = p.oid)
        UNION ALL
        -- A row hints or row mark function (live.sql) of a table that no longer has a notify
        -- trigger (its INSERT's: a table with a mark function has no UPDATE statement trigger).
        SELECT p.oid::regprocedure FROM pg_proc p
         WHERE p.pronamespace = 'ferry'::regnamespace AND p.proname ~ '^sync_(hints|mark)_[0-9]+$'
           AND NOT EXISTS (SELECT 1 FROM pg_trigger t
                            WHERE t.tgrelid = regexp_replace(p.proname, '^sync_(hints|mark)_', '')::oid
                              AND t.tgname = 'zz_ferry_notify_insert')
    LOOP
        EXECUTE format('DROP FUNCTION %s', v_stale);
    END LOOP;
    PERFORM pg_notify('ferry_schema', '');
    RETURN v_count;
END
$function$;
REVOKE ALL ON FUNCTION ferry.refresh_sync_triggers() FROM PUBLIC;

-- (Versioned definitions before this file: 0011, 0018.)
CREATE OR REPLACE FUNCTION ferry.enable_sync_base(p_table regclass)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    PERFORM ferry.enable_sync_columns(p_table);
    IF NOT EXISTS (SELECT 1 FROM pg_attribute a
                    WHERE a.attrelid = p_table AND a.attname = '_ferry_writer' AND NOT a.attisdropped) THEN
        EXECUTE format('ALTER TABLE %s ADD COLUMN _ferry_writer uuid', p_table);
    END IF;
END
$function$;
REVOKE ALL ON FUNCTION ferry.enable_sync_base(regclass) FROM PUBLIC;

-- ferry.<p_name>(), a generated trigger function with the body p_source:
-- created or replaced only when it differs (replacing a function takes no
-- lock on the tables using it). The one place generated trigger functions
-- are made: 0011's update triggers come through here too from now on.
-- p_search_path false: a function whose source names everything with its
-- schema, made without `SET search_path` (issue 47): PostgreSQL saves, sets
-- and restores a SET setting around every call, ~12,000 instructions, twice a
-- PATCH. A function made with it before is made again without.
CREATE OR REPLACE FUNCTION ferry.generated_trigger_function(p_name text, p_source text, p_search_path boolean)
 RETURNS regprocedure
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_function oid;
    v_current text;
    v_config text[];
BEGIN
    SELECT p.oid, p.prosrc, p.proconfig INTO v_function, v_current, v_config FROM pg_proc p
     WHERE p.pronamespace = 'ferry'::regnamespace AND p.proname = p_name AND p.pronargs = 0;
    IF v_function IS NULL OR v_current IS DISTINCT FROM p_source OR (v_config IS NOT NULL) IS DISTINCT FROM p_search_path THEN
        EXECUTE format('CREATE OR REPLACE FUNCTION ferry.%I() RETURNS trigger LANGUAGE plpgsql %s AS %L', p_name,
                       CASE WHEN p_search_path THEN 'SET search_path = pg_catalog, ferry, pg_temp' ELSE '' END, p_source);
        EXECUTE format('REVOKE EXECUTE ON FUNCTION ferry.%I() FROM PUBLIC', p_name);
        v_function := format('ferry.%I()', p_name)::regprocedure;
    END IF;
    RETURN v_function;
END
$function$;
REVOKE ALL ON FUNCTION ferry.generated_trigger_function(text,text,boolean) FROM PUBLIC;

-- 0017's signature: with `SET search_path`.
-- (Versioned definitions before this file: 0017.)
CREATE OR REPLACE FUNCTION ferry.generated_trigger_function(p_name text, p_source text)
 RETURNS regprocedure
 LANGUAGE sql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
RETURN ferry.generated_trigger_function(p_name, p_source, true);
REVOKE ALL ON FUNCTION ferry.generated_trigger_function(text,text) FROM PUBLIC;

-- Points trigger p_trigger of p_table at p_function unless it already is:
-- CREATE TRIGGER p_trigger <p_events> ON p_table <p_level> EXECUTE FUNCTION p_function.
-- (Versioned definitions before this file: 0017.)
CREATE OR REPLACE FUNCTION ferry.point_trigger(p_table regclass, p_trigger text, p_events text, p_level text, p_function regprocedure)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_trigger t
                    WHERE t.tgrelid = p_table AND t.tgname = p_trigger AND t.tgfoid = p_function) THEN
        EXECUTE format('CREATE OR REPLACE TRIGGER %I %s ON %s %s EXECUTE FUNCTION %s',
                       p_trigger, p_events, p_table, p_level, p_function);
    END IF;
END
$function$;
REVOKE ALL ON FUNCTION ferry.point_trigger(regclass,text,text,text,regprocedure) FROM PUBLIC;

-- 0011's ferry.refresh_sync_trigger keeps its name for what it now does (both
-- kinds of generated trigger); its update part is renamed, and redefined below.
-- (Versioned definitions before this file: 0017.)
CREATE OR REPLACE FUNCTION ferry.refresh_sync_update_trigger(p_table regclass)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    PERFORM ferry.point_trigger(p_table, 'zz_ferry_sync_update', 'BEFORE UPDATE', 'FOR EACH ROW',
        ferry.generated_trigger_function('sync_update_' || p_table::oid, ferry.sync_update_source(p_table), false));
END
$function$;
REVOKE ALL ON FUNCTION ferry.refresh_sync_update_trigger(regclass) FROM PUBLIC;

-- Tables made syncable from now on get the column with the others: 0001's
-- enable_sync_base (which ferry.enable_sync calls, 0011) keeps its name and
-- adds it after the rest.
-- (Versioned definitions before this file: 0018.)
CREATE OR REPLACE FUNCTION ferry.enable_sync_columns(p_table regclass)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_kind "char";
    v_schema name;
    v_name name;
    v_pk text[];
    v_col record;
    v_now_ms bigint := ferry.now_ms();
    v_xid xid8 := pg_current_xact_id();
    v_expected constant jsonb := jsonb_build_object(
        'revision', 'bigint', 'last_modified', 'bigint', 'is_deleted', 'boolean',
        '_ferry_xid', 'xid8', '_ferry_field_revisions', 'jsonb');
    v_type text;
BEGIN
    SELECT c.relkind, n.nspname, c.relname INTO v_kind, v_schema, v_name
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.oid = p_table;
    IF v_kind NOT IN ('r', 'p') THEN
        RAISE EXCEPTION USING ERRCODE = '42809', MESSAGE = format('%s is not a table', p_table);
    END IF;

    SELECT array_agg(a.attname::text ORDER BY a.attnum) INTO v_pk
      FROM pg_index i
      JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
     WHERE i.indrelid = p_table AND i.indisprimary;
    IF v_pk IS DISTINCT FROM ARRAY['id'] THEN
        RAISE EXCEPTION USING ERRCODE = '42P16',
            MESSAGE = format('%s needs a single-column primary key named id to be synced (has %s)',
                             p_table, coalesce(array_to_string(v_pk, ', '), 'none'));
    END IF;

    -- Constant defaults first, so adding a column to a big table does not rewrite it;
    -- the real (volatile) defaults are set right after.
    IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = p_table AND attname = 'revision' AND NOT attisdropped) THEN
        EXECUTE format('ALTER TABLE %s ADD COLUMN revision bigint NOT NULL DEFAULT 1', p_table);
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = p_table AND attname = 'last_modified' AND NOT attisdropped) THEN
        EXECUTE format('ALTER TABLE %s ADD COLUMN last_modified bigint NOT NULL DEFAULT %s', p_table, v_now_ms);
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = p_table AND attname = 'is_deleted' AND NOT attisdropped) THEN
        EXECUTE format('ALTER TABLE %s ADD COLUMN is_deleted boolean NOT NULL DEFAULT false', p_table);
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = p_table AND attname = '_ferry_xid' AND NOT attisdropped) THEN
        EXECUTE format('ALTER TABLE %s ADD COLUMN _ferry_xid xid8 NOT NULL DEFAULT %L', p_table, v_xid);
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = p_table AND attname = '_ferry_field_revisions' AND NOT attisdropped) THEN
        EXECUTE format('ALTER TABLE %s ADD COLUMN _ferry_field_revisions jsonb NOT NULL DEFAULT %L', p_table, '{}');
    END IF;

    FOR v_col IN SELECT key, value #>> '{}' AS want FROM jsonb_each(v_expected) LOOP
        SELECT format_type(a.atttypid, a.atttypmod) INTO v_type
          FROM pg_attribute a WHERE a.attrelid = p_table AND a.attname = v_col.key AND NOT a.attisdropped;
        IF v_type IS DISTINCT FROM v_col.want THEN
            RAISE EXCEPTION USING ERRCODE = '42804',
                MESSAGE = format('%s.%s must be %s to be synced, not %s', p_table, v_col.key, v_col.want, v_type);
        END IF;
    END LOOP;

    EXECUTE format($f$
        ALTER TABLE %1$s
            ALTER COLUMN revision SET DEFAULT 1,
            ALTER COLUMN revision SET NOT NULL,
            ALTER COLUMN last_modified SET DEFAULT ferry.now_ms(),
            ALTER COLUMN last_modified SET NOT NULL,
            ALTER COLUMN is_deleted SET DEFAULT false,
            ALTER COLUMN is_deleted SET NOT NULL,
            ALTER COLUMN _ferry_xid SET DEFAULT pg_current_xact_id(),
            ALTER COLUMN _ferry_xid SET NOT NULL,
            ALTER COLUMN _ferry_field_revisions SET DEFAULT '{}'::jsonb,
            ALTER COLUMN _ferry_field_revisions SET NOT NULL
    $f$, p_table);

    EXECUTE format('CREATE OR REPLACE TRIGGER zz_ferry_sync_insert BEFORE INSERT ON %s
                    FOR EACH ROW EXECUTE FUNCTION ferry.sync_before_insert()', p_table);
    EXECUTE format('CREATE OR REPLACE TRIGGER zz_ferry_sync_update BEFORE UPDATE ON %s
                    FOR EACH ROW EXECUTE FUNCTION ferry.sync_before_update()', p_table);
    EXECUTE format('CREATE OR REPLACE TRIGGER zz_ferry_sync_delete BEFORE DELETE ON %s
                    FOR EACH ROW EXECUTE FUNCTION ferry.sync_before_delete()', p_table);
    EXECUTE format('CREATE OR REPLACE TRIGGER zz_ferry_sync_truncate BEFORE TRUNCATE ON %s
                    FOR EACH STATEMENT EXECUTE FUNCTION ferry.sync_before_truncate()', p_table);

    -- The changes feed walks (_ferry_xid, id); the purge looks for old tombstones.
    EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON %s (_ferry_xid, id)',
                   left(v_name, 45) || '_ferry_xid_idx', p_table);
    EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON %s (last_modified) WHERE is_deleted',
                   left(v_name, 45) || '_ferry_tombstones_idx', p_table);

    -- Forget dropped tables first, so a reused OID cannot inherit a registration.
    DELETE FROM ferry.synced_tables s
     WHERE NOT EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = s.table_oid);
    INSERT INTO ferry.synced_tables (table_oid, schema_name, table_name)
         VALUES (p_table, v_schema, v_name)
    ON CONFLICT (table_oid) DO NOTHING;
END
$function$;
REVOKE ALL ON FUNCTION ferry.enable_sync_columns(regclass) FROM PUBLIC;
COMMENT ON FUNCTION ferry.enable_sync_columns(regclass) IS
    'ferry.enable_sync of 0001: columns, generic triggers, indexes, registration. ferry.enable_sync_base calls it.';

-- The columns that put a row of p_table into an access scope other than its
-- own (its member columns, by name), present in the table now; NULL when there
-- are none or the table has no id. The reach check's source and its UPDATE
-- trigger's WHEN clause are both made from this one list.
-- (Versioned definitions before this file: none; 0022's sync_reach_source had this query.)
CREATE OR REPLACE FUNCTION ferry.sync_reach_columns(p_table regclass)
 RETURNS text[]
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
    SELECT array_agg(s.member_column ORDER BY s.member_column)
      FROM (SELECT DISTINCT s.member_column::text AS member_column FROM ferry.access_scopes s
              JOIN pg_attribute a ON a.attrelid = s.member_table AND a.attname = s.member_column AND NOT a.attisdropped
             WHERE s.member_table = p_table AND s.scope_table <> p_table) s
     WHERE EXISTS (SELECT 1 FROM pg_attribute a
                    WHERE a.attrelid = p_table AND a.attname = 'id' AND a.attnum > 0 AND NOT a.attisdropped)
$function$;
REVOKE ALL ON FUNCTION ferry.sync_reach_columns(regclass) FROM PUBLIC;

-- The body of p_table's reach-check trigger function, from its access scopes
-- now; NULL when the table is a member of no scope but its own (or has no id).
-- An INSERT is checked by a statement trigger (its rows in new_rows); an
-- UPDATE by a row trigger whose WHEN clause (ferry.refresh_sync_reach) lets
-- through only a row whose member column changed, so an update that moves no
-- row between scopes, as nearly all do, calls no function at all (issue 47:
-- the statement trigger cost every one-row PATCH a PL/pgSQL call, ~84 µs).
-- (Versioned definitions before this file: 0022.)
CREATE OR REPLACE FUNCTION ferry.sync_reach_source(p_table regclass)
 RETURNS text
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    IF ferry.sync_reach_columns(p_table) IS NULL THEN
        RETURN NULL;
    END IF;
    RETURN format($body$
-- Generated by ferry.refresh_sync_reach for the table with oid %1$s; do not edit.
DECLARE
    v_lost text;
BEGIN
    IF nullif(current_setting('ferry.user_id', true), '') IS NULL THEN
        RETURN NULL;
    END IF;
    IF TG_LEVEL = 'ROW' THEN
        -- An UPDATE that moved this row (the trigger's WHEN clause), after its foreign-key check.
        IF NOT EXISTS (SELECT 1 FROM %2$s t WHERE t.id = NEW.id) THEN
            v_lost := NEW.id::text;
        END IF;
    ELSE
        SELECT n.id::text INTO v_lost FROM new_rows n
         WHERE NOT EXISTS (SELECT 1 FROM %2$s t WHERE t.id = n.id) LIMIT 1;
    END IF;
    IF v_lost IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = '42501',
            MESSAGE = format('new row violates row-level security policy for table "%%s"', %3$L),
            DETAIL = 'The writer lost access to the row''s scope while the write waited for it.';
    END IF;
    RETURN NULL;
END
$body$, p_table::oid, p_table, (SELECT c.relname FROM pg_class c WHERE c.oid = p_table));
END
$function$;
REVOKE ALL ON FUNCTION ferry.sync_reach_source(regclass) FROM PUBLIC;

-- (Re)generates p_table's reach check and its two triggers, or drops them and
-- the function when the table no longer needs one. A dropped table's function
-- stays behind: ferry.refresh_sync_triggers' sweep (0017) knows only the
-- sync_update_ and sync_notify_ functions, and a few unused lines are not worth
-- restating that whole function here.
-- AFTER INSERT: a statement trigger, as 0022 made it. AFTER UPDATE: a row
-- trigger WHEN a member column changed (issue 47; 0022's was a statement
-- trigger that joined the transition tables on every UPDATE). Both stay AFTER
-- triggers named zz_*: PostgreSQL fires a row's AFTER triggers in name order,
-- so the check runs after the foreign-key check (RI_ConstraintTrigger_*) that
-- waited for a revocation's lock; statement triggers fire after all row ones.
-- The UPDATE trigger is current when it is a row trigger of this function whose
-- WHEN clause reads exactly the member columns (PostgreSQL records each column
-- a WHEN clause reads in pg_depend), so a refresh that changes nothing takes no
-- lock on the table; otherwise it is made again, which also replaces 0022's
-- statement trigger on a database that had it.
-- (Versioned definitions before this file: 0022.)
CREATE OR REPLACE FUNCTION ferry.refresh_sync_reach(p_table regclass)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_source text := ferry.sync_reach_source(p_table);
    v_columns text[] := ferry.sync_reach_columns(p_table);
    v_function regprocedure;
    v_trigger name;
BEGIN
    IF v_source IS NULL THEN
        -- Only what exists: DROP ... IF EXISTS would print a notice per table
        -- on every migration.
        FOR v_trigger IN
            SELECT t.tgname FROM pg_trigger t
             WHERE t.tgrelid = p_table AND t.tgname IN ('zz_ferry_reach_insert', 'zz_ferry_reach_update')
        LOOP
            EXECUTE format('DROP TRIGGER %I ON %s', v_trigger, p_table);
        END LOOP;
        IF to_regprocedure(format('ferry.%I()', 'sync_reach_' || p_table::oid)) IS NOT NULL THEN
            EXECUTE format('DROP FUNCTION ferry.%I()', 'sync_reach_' || p_table::oid);
        END IF;
        RETURN;
    END IF;
    v_function := ferry.generated_trigger_function('sync_reach_' || p_table::oid, v_source);
    PERFORM ferry.point_trigger(p_table, 'zz_ferry_reach_insert', 'AFTER INSERT',
        'REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT', v_function);
    IF NOT EXISTS (
        SELECT 1 FROM pg_trigger t
         WHERE t.tgrelid = p_table AND t.tgname = 'zz_ferry_reach_update' AND t.tgfoid = v_function
           AND t.tgtype = 17 -- ROW | UPDATE, AFTER
           AND t.tgqual IS NOT NULL
           AND (SELECT array_agg(a.attname::text ORDER BY a.attname::text)
                  FROM pg_depend d
                  JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
                 WHERE d.classid = 'pg_trigger'::regclass AND d.objid = t.oid
                   AND d.refclassid = 'pg_class'::regclass AND d.refobjid = p_table AND d.refobjsubid > 0)
               = (SELECT array_agg(c ORDER BY c) FROM unnest(v_columns) c)) THEN
        EXECUTE format('CREATE OR REPLACE TRIGGER zz_ferry_reach_update AFTER UPDATE ON %s FOR EACH ROW WHEN (%s) '
                       'EXECUTE FUNCTION %s', p_table,
                       (SELECT string_agg(format('OLD.%1$I IS DISTINCT FROM NEW.%1$I', c), ' OR ' ORDER BY c)
                          FROM unnest(v_columns) c),
                       v_function);
    END IF;
END
$function$;
REVOKE ALL ON FUNCTION ferry.refresh_sync_reach(regclass) FROM PUBLIC;

