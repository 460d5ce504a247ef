-- functions/live.sql: Live hints: what a committed write notifies (ferry.hint, the notify triggers' generator, the access logs' notify).
--
-- A repeatable file (migrations/README.md): the current definition of each of its
-- functions, triggers and policies, applied by `ferry migrate` after the versioned
-- files whenever its checksum differs from the one recorded in
-- ferry.schema_repeatables. Change a function here, never in a new versioned file.
-- Every statement must be safe to run again on a database that already has it.
-- Each function keeps the comment of the versioned file that last defined it.

-- The statements both generated hint makers end with (the notify function,
-- ferry.sync_notify_source, and the update trigger's hints,
-- ferry.sync_row_hints_source), each line after p_indent: the hints in v_out,
-- notified outside Ferry's collect mode, else each added once to ferry.hints,
-- read and set once (past 64 kB notified instead, as ferry.hint does), with
-- plain assignments (core 0034: PL/pgSQL sets up every expression and every
-- PERFORM anew in each transaction). The function that includes them declares
-- v_out, v_key, v_hints and v_added.
CREATE OR REPLACE FUNCTION ferry.sync_hints_send_source(p_indent text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
RETURN p_indent || replace($send$IF pg_catalog.current_setting('ferry.hint_mode', true) IS DISTINCT FROM 'collect' THEN
    FOREACH v_key IN ARRAY v_out LOOP
        PERFORM pg_catalog.pg_notify('ferry_changes', v_key);
    END LOOP;
ELSE
    v_hints := COALESCE(pg_catalog.current_setting('ferry.hints', true), '');
    v_added := false;
    FOREACH v_key IN ARRAY v_out LOOP
        IF pg_catalog.strpos(E'\n' || v_hints, E'\n' || v_key || E'\n') = 0 THEN
            IF pg_catalog.octet_length(v_hints) > 65536 THEN
                PERFORM pg_catalog.pg_notify('ferry_changes', v_key);
            ELSE
                v_hints := v_hints || v_key || E'\n';
                v_added := true;
            END IF;
        END IF;
    END LOOP;
    IF v_added THEN
        v_hints := pg_catalog.set_config('ferry.hints', v_hints, true);
    END IF;
END IF;$send$, E'\n', E'\n' || p_indent);
REVOKE ALL ON FUNCTION ferry.sync_hints_send_source(text) FROM PUBLIC;

-- p_table's access scope columns (ferry.access_scopes, not dropped), in the order of
-- their scope tables' oids, which is the order of every hint the generated triggers and
-- Ferry make (RowHints.swift): each with whether it is plain (never NULL, a uuid or an
-- integer, or a domain over one: its text is one key). The generators below read their
-- scopes here.
CREATE OR REPLACE FUNCTION ferry.sync_scope_columns(p_table regclass)
 RETURNS TABLE (scope_oid oid, col name, plain boolean)
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
    SELECT s.scope_table::oid, s.member_column,
           a.attnotnull AND (ferry.base_type(a.atttypid, a.atttypmod)).base_type
                            IN ('uuid'::regtype, 'int2'::regtype, 'int4'::regtype, 'int8'::regtype)
      FROM ferry.access_scopes s
      JOIN pg_attribute a ON a.attrelid = s.member_table AND a.attname = s.member_column AND NOT a.attisdropped
     WHERE s.member_table = p_table
     ORDER BY s.scope_table::oid;
$function$;
REVOKE ALL ON FUNCTION ferry.sync_scope_columns(regclass) FROM PUBLIC;

-- Whether p_table's UPDATEs are hinted row by row by its update trigger, which skips the
-- row Ferry's one-row UPDATE marks (ferry.sync_row_hints_source), rather than by its
-- UPDATE notify statement trigger: a table whose scope columns are all plain and that is
-- not a private members table. Exactly the tables with a row hints and a row mark function.
CREATE OR REPLACE FUNCTION ferry.sync_hints_rows(p_table regclass)
 RETURNS boolean
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
    SELECT NOT ferry.rules_private_members(p_table)
           AND NOT EXISTS (SELECT 1 FROM ferry.sync_scope_columns(p_table) c WHERE NOT c.plain);
$function$;
REVOKE ALL ON FUNCTION ferry.sync_hints_rows(regclass) FROM PUBLIC;

-- The body of p_table's notify trigger function, from its access scopes now:
-- 0028's (with 0032's stamp), its hints gathered in v_out in the order it
-- sent them, then collected or notified as ferry.hint() would have, one by one.
-- A statement that wrote no row returns at once, unstamped (issue 47 review).
-- A private members table (ferry.rules_private_members: a class's member rows)
-- names its rows' members and their scope rows' owners instead of the scope
-- rows: only they read those rows, and the members whose access changed are
-- named again by the access logs (ferry.access_log_notify). A scope hint would
-- wake every member of the class for a row none of them reads (issue 46). A
-- scope row the writer cannot see (so no owner to name) keeps the scope hint.
-- The function is made without `SET search_path` (issue 47: saving, setting
-- and restoring it cost ~12,000 instructions a call, and every UPDATE of a
-- synced table calls it, Ferry's one-row PATCH included): its body names every
-- function and type with its schema, and its scope table by schema and name,
-- as the generated update trigger's does. Tests/SQL/28 writes under a hostile
-- search_path.
-- (Versioned definitions before this file: 0017, 0028, 0032, 0034.)
CREATE OR REPLACE FUNCTION ferry.sync_notify_source(p_table regclass)
 RETURNS text
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_scopes text := '';
    v_scope record;
    v_private record;
BEGIN
    SELECT m.member_column AS member, m.rule_column AS col, m.target_table AS scope_table, o.rule_column AS owner
      INTO v_private
      FROM ferry.sync_rules m
      JOIN ferry.sync_rules o ON o.table_oid = m.target_table AND o.kind = 'owned'
     WHERE m.table_oid = p_table AND m.kind = 'members' AND ferry.rules_private_members(p_table);
    FOR v_scope IN SELECT c.scope_oid, c.col FROM ferry.sync_scope_columns(p_table) c LOOP
        IF v_private.scope_table::oid = v_scope.scope_oid AND v_private.col = v_scope.col THEN
            v_scopes := v_scopes || format($private$
    -- Private member rows: their members and their scope rows' owners.
    IF TG_OP = 'UPDATE' THEN
        SELECT pg_catalog.count(k.id), pg_catalog.count(s.id), pg_catalog.array_agg(DISTINCT s.%4$I::pg_catalog.text) FILTER (WHERE s.%4$I IS NOT NULL)
          INTO v_wanted, v_found, v_owners
          FROM (SELECT n.%1$I AS id FROM new_rows n UNION SELECT o.%1$I FROM old_rows o) k
          LEFT JOIN %3$s s ON s.id = k.id
         WHERE k.id IS NOT NULL;
        SELECT pg_catalog.array_agg(DISTINCT u.k) INTO v_keys
          FROM (SELECT n.%2$I::pg_catalog.text AS k FROM new_rows n UNION ALL SELECT o.%2$I::pg_catalog.text FROM old_rows o) u
         WHERE u.k IS NOT NULL;
    ELSE
        SELECT pg_catalog.count(k.id), pg_catalog.count(s.id), pg_catalog.array_agg(DISTINCT s.%4$I::pg_catalog.text) FILTER (WHERE s.%4$I IS NOT NULL)
          INTO v_wanted, v_found, v_owners
          FROM (SELECT DISTINCT n.%1$I AS id FROM new_rows n) k
          LEFT JOIN %3$s s ON s.id = k.id
         WHERE k.id IS NOT NULL;
        SELECT pg_catalog.array_agg(DISTINCT n.%2$I::pg_catalog.text) INTO v_keys FROM new_rows n WHERE n.%2$I IS NOT NULL;
    END IF;
    IF v_found = v_wanted THEN
        v_keys := array(SELECT DISTINCT x FROM pg_catalog.unnest(coalesce(v_keys, '{}') || coalesce(v_owners, '{}')) x
                         WHERE x IS DISTINCT FROM v_user ORDER BY x);
        IF pg_catalog.cardinality(v_keys) > 100 THEN
            v_everyone := true;
        ELSE
            FOREACH v_key IN ARRAY v_keys LOOP
                v_out := v_out || (v_head || 'u ' || v_key);
            END LOOP;
        END IF;
        v_keys := NULL;
    ELSE$private$, v_scope.col, v_private.member,
                (SELECT format('%I.%I', n.nspname, c.relname) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                  WHERE c.oid = v_private.scope_table),
                v_private.owner);
        END IF;
        v_scopes := v_scopes || format($scope$
    IF TG_OP = 'UPDATE' THEN
        SELECT pg_catalog.array_agg(DISTINCT u.k) INTO v_keys
          FROM (SELECT n.%1$I::pg_catalog.text AS k FROM new_rows n UNION ALL SELECT o.%1$I::pg_catalog.text FROM old_rows o) u
         WHERE u.k IS NOT NULL;
    ELSE
        SELECT pg_catalog.array_agg(DISTINCT n.%1$I::pg_catalog.text) INTO v_keys FROM new_rows n WHERE n.%1$I IS NOT NULL;
    END IF;
    IF pg_catalog.cardinality(v_keys) > 100 THEN
        v_everyone := true;
    ELSIF v_keys IS NOT NULL THEN
        FOREACH v_key IN ARRAY v_keys LOOP
            IF pg_catalog.octet_length(v_key) > 1000 THEN
                v_everyone := true;
            ELSE
                v_out := v_out || (v_head || 's %2$s ' || v_key);
            END IF;
        END LOOP;
    END IF;$scope$, v_scope.col, v_scope.scope_oid);
        IF v_private.scope_table::oid = v_scope.scope_oid AND v_private.col = v_scope.col THEN
            v_scopes := v_scopes || E'\n    END IF;';
        END IF;
    END LOOP;
    RETURN format($body$
-- Generated by ferry.refresh_sync_trigger for the table with oid %1$s; do not edit.
DECLARE
    v_head pg_catalog.text;
    v_user pg_catalog.text;
    v_everyone pg_catalog.bool;
    v_keys pg_catalog.text[];
    v_key pg_catalog.text;
    v_out pg_catalog.text[];
    v_hints pg_catalog.text;
    v_added pg_catalog.bool;%3$s
BEGIN
    -- Ferry's one-row UPDATE marked this statement in its RETURNING and makes
    -- its hints itself (ferry.sync_mark_source; the previous release's
    -- ferry.sync_hints_source collected them there): clear the mark, so that it
    -- serves this statement only, and return before anything else is set up. Depth 1:
    -- this statement's own trigger, not that of a write another trigger made.
    -- One expression (PL/pgSQL sets up each again in every transaction), in
    -- parentheses: PL/pgSQL would end an IF's condition at the CASE's THEN.
    IF (CASE WHEN pg_catalog.current_setting('ferry.hinted', true) = '%1$s' AND pg_catalog.pg_trigger_depth() = 1
             THEN pg_catalog.set_config('ferry.hinted', '', true) IS NOT NULL END) THEN
        RETURN NULL;
    END IF;
    v_user := nullif(pg_catalog.current_setting('ferry.user_id', true), '');
    v_everyone := v_user IS NULL;
    v_out := '{}';
    -- A statement that wrote no row (an UPDATE that matched none) neither
    -- stamps nor hints: stamping would hold the feed for a transaction that
    -- has written no synced row. The row triggers stamped before any row.
    IF coalesce(pg_catalog.current_setting('ferry.stamp', true), '') = '' AND NOT EXISTS (SELECT FROM new_rows) THEN
        RETURN NULL;
    END IF;
    v_head := ferry.stamp()::pg_catalog.text || ' %1$s ';%2$s
    IF v_everyone THEN
        v_out := v_out || (v_head || '*');
    ELSE
        v_out := v_out || (v_head || 'u ' || v_user);
    END IF;
%4$s
    RETURN NULL;
END
$body$, p_table::oid, v_scopes, CASE WHEN v_private.scope_table IS NOT NULL THEN '
    v_wanted pg_catalog.int8;
    v_found pg_catalog.int8;
    v_owners pg_catalog.text[];' ELSE '' END, ferry.sync_hints_send_source('    '));
END
$function$;
REVOKE ALL ON FUNCTION ferry.sync_notify_source(regclass) FROM PUBLIC;

-- The body of p_table's row hints function (ferry.sync_hints_<oid>), or NULL
-- for a table that has none: a private members table, whose hints name its
-- scope rows' owners (a query the notify trigger makes), and a table with a
-- scope column that may be NULL or is not a uuid or an integer (the trigger
-- then leaves out a NULL key, and makes '*' of one past 1000 bytes). Issue
-- 47 item 4: Ferry's one-row UPDATE (Sources/Ferry/Planning/FastUpdateSQL.swift)
-- calls it in its RETURNING clause with the written row. In Ferry's collect
-- mode, when nothing was collected yet in the transaction, it collects the
-- hints the notify trigger would have (the row's scope hints in the order of
-- the scope tables' oids, then the writer's, or '*' without one) and sets
-- ferry.hinted to the table's oid; the notify function then returns at its
-- first statement (a WHEN on the trigger cost more: PostgreSQL reads and
-- plans a trigger's WHEN again for every statement). Else it
-- clears ferry.hinted, and the trigger hints as before. One SQL expression,
-- so that PostgreSQL inlines it into the UPDATE's plan: no call, no PL/pgSQL
-- set-up. Few function calls, one format() for the text: PostgreSQL checks
-- EXECUTE on each function of an expression as it sets the statement up
-- (bench/feed/README.md). Every name qualified, operators too (a SET clause
-- would stop the inlining). Its argument is the row as anyelement, so that
-- the function does not depend on the table's row type (which would block a
-- DROP TABLE). It sees no old row: Ferry calls it only for tables whose scope
-- columns the serve role may not update (SchemaIntrospector), so a row's
-- scope keys are its new ones.
CREATE OR REPLACE FUNCTION ferry.sync_hints_source(p_table regclass)
 RETURNS text
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_lines text := '';
    v_args text := '';
    v_n int := 1;
    v_scope record;
BEGIN
    IF NOT ferry.sync_hints_rows(p_table) THEN
        RETURN NULL;
    END IF;
    FOR v_scope IN SELECT c.scope_oid, c.col FROM ferry.sync_scope_columns(p_table) c LOOP
        v_n := v_n + 1;
        v_lines := v_lines || format(E'%%1$s %s s %s %%%s$s\n', p_table::oid, v_scope.scope_oid, v_n);
        v_args := v_args || format(', ($1).%I', v_scope.col);
    END LOOP;
    RETURN format($body$
SELECT CASE WHEN pg_catalog.current_setting('ferry.hint_mode', true) OPERATOR(pg_catalog.=) 'collect'
             AND COALESCE(pg_catalog.current_setting('ferry.hints', true), '') OPERATOR(pg_catalog.=) ''
       THEN pg_catalog.set_config('ferry.hints', pg_catalog.format(%1$L, ferry.stamp()%2$s,
              COALESCE('u ' OPERATOR(pg_catalog.||) NULLIF(pg_catalog.current_setting('ferry.user_id', true), ''), '*')), true)
              IS NOT NULL
        AND pg_catalog.set_config('ferry.hinted', %3$L, true) IS NOT NULL
       ELSE pg_catalog.set_config('ferry.hinted', '', true) IS NULL END
$body$, v_lines || format(E'%%1$s %s %%%s$s\n', p_table::oid, v_n + 1), v_args, p_table::oid::text);
END
$function$;
REVOKE ALL ON FUNCTION ferry.sync_hints_source(regclass) FROM PUBLIC;

-- The body of p_table's row mark function (ferry.sync_mark_<oid>), or NULL
-- where there is no row hints function (ferry.sync_hints_source: the same
-- tables). Issue 47 item 4, its second step: Ferry's one-row UPDATE
-- (Sources/Ferry/Planning/FastUpdateSQL.swift) calls it in its RETURNING
-- clause with the written row, and returns the row's stamp, writer and scope
-- keys beside it; Ferry makes the row's hints itself from them, after the
-- statement (Sources/Ferry/SQL/RowHints.swift), and adds them to the
-- ones the transaction collected. In collect mode the function only sets
-- ferry.hinted to the table's oid (so the notify function returns at its
-- first statement) and answers true: Ferry makes this row's hints. Outside
-- collect mode it answers NULL and the trigger hints as before. Why:
-- sync_hints_<oid> made the hints' text in the plan, a dozen function calls
-- whose set-up (EXECUTE checks included) and run cost ~80,000 instructions a
-- PATCH, 5 % of its transaction (bench/feed/README.md); this is two calls.
-- A new name, not a new body for sync_hints_<oid>: a Ferry still running the
-- previous release calls that one and reads nothing back, and would lose its
-- PATCHes' hints between `ferry migrate` and its restart.
CREATE OR REPLACE FUNCTION ferry.sync_mark_source(p_table regclass)
 RETURNS text
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    IF NOT ferry.sync_hints_rows(p_table) THEN
        RETURN NULL;
    END IF;
    RETURN format($body$
SELECT CASE WHEN pg_catalog.current_setting('ferry.hint_mode', true) OPERATOR(pg_catalog.=) 'collect'
       THEN pg_catalog.set_config('ferry.hinted', %1$L, true) IS NOT NULL END
$body$, p_table::oid::text);
END
$function$;
REVOKE ALL ON FUNCTION ferry.sync_mark_source(regclass) FROM PUBLIC;

-- The live hints part of p_table's generated update trigger (ferry.sync_update_source), for
-- the tables with a row mark function (ferry.sync_mark_source: plain scope columns, not a
-- private members table), or NULL for the others, whose UPDATE keeps its notify statement
-- trigger: ARRAY[its declarations, its statements]. Issue 47 item 4, stop 22: the notify
-- statement trigger cost every UPDATE ~45,000 instructions even when its function returned
-- at once (PostgreSQL sets up a PL/pgSQL call and the transition tables for it; a WHEN cost
-- more), and Ferry's one-row PATCH makes its hints itself. The row trigger runs anyway: it
-- hints the row of any other writer, as the statement trigger would have (the row's scope
-- keys, old and new, then the writer's, or '*' without one; collected in Ferry's collect
-- mode, else notified), and skips Ferry's. Ferry's UPDATE says which row is its own by a
-- set_config of ferry.made to the table's oid and the row's id in its SET list
-- (FastUpdateSQL.swift, RowHints.swift), which PostgreSQL evaluates for a row that met the
-- statement's conditions, just before that row's triggers. The mark names one row, so no
-- other row's write is mistaken for it (not one another trigger makes, nor the next
-- statement's), and it is not cleared: a later write of the same row in Ferry's transaction
-- has the same hints (one caller, one stamp, scope columns the serve role cannot change),
-- which Ferry made already. A statement that marked a row and then wrote nothing (a
-- concurrent writer changed it first, or a BEFORE trigger of the app's skipped it) leaves a
-- mark Ferry clears before its next statement (CallerTransaction+Run.swift): that next one
-- may write the row and make no hints. Checking the mark costs the trigger one expression,
-- no set_config. A statement's rows are hinted one by one, deduplicated in ferry.hints when
-- collected (past 64 kB each is notified, as ferry.hint does) and by PostgreSQL's own
-- notify queue when notified; the statement trigger made one '*' of more than 100 keys,
-- here every key is named (never one wake too few). Every name qualified, as in the update
-- trigger (no SET clause).
CREATE OR REPLACE FUNCTION ferry.sync_row_hints_source(p_table regclass)
 RETURNS text[]
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_new text := '';
    v_moved text := '';
    v_scope record;
BEGIN
    IF NOT ferry.sync_hints_rows(p_table) THEN
        RETURN NULL;
    END IF;
    FOR v_scope IN SELECT c.scope_oid, c.col FROM ferry.sync_scope_columns(p_table) c LOOP
        v_new := v_new || CASE WHEN v_new = '' THEN '' ELSE ', ' END
                 || format(E'v_line || \'s %s \' || NEW.%I::pg_catalog.text', v_scope.scope_oid, v_scope.col);
        v_moved := v_moved || format(E'
        IF OLD.%1$I IS DISTINCT FROM NEW.%1$I THEN
            v_out := v_out || (v_line || \'s %2$s \' || OLD.%1$I::pg_catalog.text);
        END IF;', v_scope.col, v_scope.scope_oid);
    END LOOP;
    RETURN ARRAY[E'
    v_line pg_catalog.text;
    v_out pg_catalog.text[];
    v_key pg_catalog.text;
    v_hints pg_catalog.text;
    v_added pg_catalog.bool;',
    format($block$
    -- Live hints (ferry.sync_row_hints_source): this row's, unless Ferry's one-row UPDATE
    -- wrote it (ferry.made, set in its SET list to this table's oid and this row's id) and
    -- makes them itself.
    IF pg_catalog.current_setting('ferry.made', true) IS DISTINCT FROM '%1$s ' || NEW.id::pg_catalog.text THEN
        v_line := v_stamp::pg_catalog.text || ' %1$s ';
        v_out := ARRAY[%2$s]::pg_catalog.text[];%3$s
        v_out := v_out || (v_line || COALESCE('u ' || NULLIF(pg_catalog.current_setting('ferry.user_id', true), ''), '*'));
%4$s
    END IF;$block$, p_table::oid::text, v_new, v_moved, ferry.sync_hints_send_source('        '))];
END
$function$;
REVOKE ALL ON FUNCTION ferry.sync_row_hints_source(regclass) FROM PUBLIC;

-- (Re)generates p_table's notify function (without a SET clause, see
-- ferry.sync_notify_source) and its two statement triggers, its row hints
-- function (ferry.sync_hints_source, which a Ferry of the previous release
-- calls) and its row mark function (ferry.sync_mark_source).
-- (Versioned definitions before this file: 0017.)
CREATE OR REPLACE FUNCTION ferry.refresh_sync_notify(p_table regclass)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_function regprocedure := ferry.generated_trigger_function('sync_notify_' || p_table::oid, ferry.sync_notify_source(p_table), false);
    v_row record;
    v_current text;
BEGIN
    PERFORM ferry.point_trigger(p_table, 'zz_ferry_notify_insert', 'AFTER INSERT',
        'REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT', v_function);
    -- A table whose update trigger hints its rows (ferry.sync_row_hints_source) has no
    -- UPDATE statement trigger; the others keep it.
    IF NOT ferry.sync_hints_rows(p_table) THEN
        PERFORM ferry.point_trigger(p_table, 'zz_ferry_notify_update', 'AFTER UPDATE',
            'REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT', v_function);
    ELSIF EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgrelid = p_table AND t.tgname = 'zz_ferry_notify_update') THEN
        EXECUTE format('DROP TRIGGER zz_ferry_notify_update ON %s', p_table);
    END IF;
    FOR v_row IN
        SELECT 'sync_hints_' || p_table::oid AS name, ferry.sync_hints_source(p_table) AS source
        UNION ALL
        SELECT 'sync_mark_' || p_table::oid, ferry.sync_mark_source(p_table)
    LOOP
        SELECT p.prosrc INTO v_current FROM pg_proc p
         WHERE p.pronamespace = 'ferry'::regnamespace AND p.proname = v_row.name;
        IF v_row.source IS NULL THEN
            IF v_current IS NOT NULL THEN
                EXECUTE format('DROP FUNCTION ferry.%I(anyelement)', v_row.name);
            END IF;
        ELSIF v_current IS DISTINCT FROM v_row.source THEN
            EXECUTE format('CREATE OR REPLACE FUNCTION ferry.%I(anyelement) RETURNS boolean LANGUAGE sql VOLATILE AS %L',
                           v_row.name, v_row.source);
            -- The serve role's UPDATE calls it, and PostgreSQL inlines it only for a caller
            -- who may execute it. It only collects hints or marks the statement, which that
            -- role may do itself.
            EXECUTE format('GRANT EXECUTE ON FUNCTION ferry.%I(anyelement) TO PUBLIC', v_row.name);
        END IF;
    END LOOP;
END
$function$;
REVOKE ALL ON FUNCTION ferry.refresh_sync_notify(regclass) FROM PUBLIC;

-- 0017's access-log trigger, the same way.
-- (Versioned definitions before this file: 0017, 0028, 0032; the comment is 0028's.)
CREATE OR REPLACE FUNCTION ferry.access_log_notify()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    PERFORM ferry.hint(ferry.stamp()::text || ' 0 u ' || u.user_id::text)
       FROM (SELECT DISTINCT n.user_id FROM new_rows n) u;
    RETURN NULL;
END
$function$;
REVOKE ALL ON FUNCTION ferry.access_log_notify() FROM PUBLIC;

-- 0028's ferry.hint, its last statement an assignment instead of a PERFORM.
-- (Versioned definitions before this file: 0028, 0034.)
CREATE OR REPLACE FUNCTION ferry.hint(p_hint text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    v_hints pg_catalog.text;
BEGIN
    IF pg_catalog.current_setting('ferry.hint_mode', true) IS DISTINCT FROM 'collect' THEN
        PERFORM pg_catalog.pg_notify('ferry_changes', p_hint);
        RETURN;
    END IF;
    v_hints := COALESCE(pg_catalog.current_setting('ferry.hints', true), '');
    IF pg_catalog.strpos(E'\n' || v_hints, E'\n' || p_hint || E'\n') > 0 THEN
        RETURN;
    END IF;
    IF pg_catalog.octet_length(v_hints) > 65536 THEN
        PERFORM pg_catalog.pg_notify('ferry_changes', p_hint);
        RETURN;
    END IF;
    v_hints := pg_catalog.set_config('ferry.hints', v_hints || p_hint || E'\n', true);
END
$function$;
GRANT EXECUTE ON FUNCTION ferry.hint(text) TO PUBLIC;

-- Retired: 0028's notify generator, which 0032 kept under this name and 0034's
-- ferry.sync_notify_source no longer calls.
DROP FUNCTION IF EXISTS ferry.sync_notify_source_0028(regclass);

-- Triggers and policies of this family's tables (they need the functions above).

CREATE OR REPLACE TRIGGER access_grants_notify AFTER INSERT ON ferry.access_grants REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ferry.access_log_notify();

CREATE OR REPLACE TRIGGER access_revocations_notify AFTER INSERT ON ferry.access_revocations REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ferry.access_log_notify();
