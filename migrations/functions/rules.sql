-- functions/rules.sql: Declarative sync rules (ferry.sync_owned, sync_child, sync_members, sync_public, sync_stream, sync_grant) and what they generate.
--
-- A repeatable file (migrations/README.md): the current definition of each of its
-- functions, triggers and policies, applied by `ferry migrate` after the versioned
-- files whenever its checksum differs from the one recorded in
-- ferry.schema_repeatables. Change a function here, never in a new versioned file.
-- Every statement must be safe to run again on a database that already has it.
-- Each function keeps the comment of the versioned file that last defined it.

-- The table a single-column foreign key of p_table on p_column points at, or NULL.
-- (Versioned definitions before this file: 0019.)
CREATE OR REPLACE FUNCTION ferry.rules_reference(p_table regclass, p_column name)
 RETURNS regclass
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
RETURN (SELECT (c.confrelid)::regclass AS confrelid FROM (pg_constraint c JOIN pg_attribute a ON (((a.attrelid = c.conrelid) AND (a.attnum = c.conkey[1])))) WHERE ((c.conrelid = (rules_reference.p_table)::oid) AND (c.contype = 'f'::"char") AND (cardinality(c.conkey) = 1) AND (a.attname = rules_reference.p_column)) ORDER BY c.conname LIMIT 1);
REVOKE ALL ON FUNCTION ferry.rules_reference(regclass,name) FROM PUBLIC;

-- p_column's type, or an error naming the table, the column and what named it.
-- (Versioned definitions before this file: 0019.)
CREATE OR REPLACE FUNCTION ferry.rules_column_type(p_table regclass, p_column name, p_named_as text)
 RETURNS text
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_type text;
BEGIN
    SELECT format_type(a.atttypid, a.atttypmod) INTO v_type
      FROM pg_attribute a
     WHERE a.attrelid = p_table AND a.attname = p_column AND a.attnum > 0 AND NOT a.attisdropped;
    IF v_type IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = '42703',
            MESSAGE = format('%s has no column %I (named as %s)', p_table, p_column, p_named_as),
            HINT = format('The columns of %s are: %s.', p_table, (
                SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum) FROM pg_attribute a
                 WHERE a.attrelid = p_table AND a.attnum > 0 AND NOT a.attisdropped AND left(a.attname, 7) <> '_ferry_'));
    END IF;
    RETURN v_type;
END
$function$;
REVOKE ALL ON FUNCTION ferry.rules_column_type(regclass,name,text) FROM PUBLIC;

-- The reference a rule reads through: p_column must be a foreign key to a synced table.
-- (Versioned definitions before this file: 0019.)
CREATE OR REPLACE FUNCTION ferry.rules_synced_reference(p_table regclass, p_column name, p_named_as text)
 RETURNS regclass
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_target regclass;
BEGIN
    PERFORM ferry.rules_column_type(p_table, p_column, p_named_as);
    v_target := ferry.rules_reference(p_table, p_column);
    IF v_target IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = '42830',
            MESSAGE = format('%s.%I (named as %s) is not a foreign key: the rule reads the row it points at through one',
                             p_table, p_column, p_named_as),
            HINT = format('ALTER TABLE %s ADD FOREIGN KEY (%I) REFERENCES <the table>;', p_table, p_column);
    END IF;
    IF NOT EXISTS (SELECT 1 FROM ferry.synced_tables s WHERE s.table_oid = v_target) THEN
        RAISE EXCEPTION USING ERRCODE = '55000',
            MESSAGE = format('%s.%I (named as %s) points at %s, which is not synced: give %s its rule first',
                             p_table, p_column, p_named_as, v_target, v_target);
    END IF;
    RETURN v_target;
END
$function$;
REVOKE ALL ON FUNCTION ferry.rules_synced_reference(regclass,name,text) FROM PUBLIC;

-- "The row p_table.p_column points at is readable by the caller", for a policy
-- of p_table: the target's own policies decide.
-- (Versioned definitions before this file: 0019.)
CREATE OR REPLACE FUNCTION ferry.rules_readable(p_table regclass, p_column name, p_target regclass)
 RETURNS text
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
RETURN format('EXISTS (SELECT 1 FROM %s r WHERE r.id = %I.%I)'::text, p_target, (SELECT c.relname FROM pg_class c WHERE (c.oid = (rules_readable.p_table)::oid)), p_column);
REVOKE ALL ON FUNCTION ferry.rules_readable(regclass,name,regclass) FROM PUBLIC;

-- The function a members rule generates: the caller's live scope ids, as one array.
-- (Versioned definitions before this file: 0019.)
CREATE OR REPLACE FUNCTION ferry.rules_scope_ids_function(p_members regclass)
 RETURNS text
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
RETURN (SELECT format('%I.%I()'::text, n.nspname, "left"(('_ferry_scope_ids_'::text || (c.relname)::text), 63)) AS format FROM (pg_class c JOIN pg_namespace n ON ((n.oid = c.relnamespace))) WHERE (c.oid = (rules_scope_ids_function.p_members)::oid));
REVOKE ALL ON FUNCTION ferry.rules_scope_ids_function(regclass) FROM PUBLIC;

-- Whether p_table is a members table whose rows are private to the scope's
-- owner and each row's own member (issue 46, "Membership grows as the
-- square"): the members table of a shared table that a grant rule reaches
-- through. A class's students read their own member row, not one another's;
-- its teacher reads them all. Each student's first sync then carries one
-- member row, not the whole class's.
CREATE OR REPLACE FUNCTION ferry.rules_private_members(p_table regclass)
 RETURNS boolean
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
    SELECT EXISTS (SELECT 1 FROM ferry.sync_rules m
                    WHERE m.table_oid = p_table AND m.kind = 'members'
                      AND EXISTS (SELECT 1 FROM ferry.sync_rules g
                                   WHERE g.kind = 'grant' AND ferry.rules_through(g.table_oid) = m.target_table))
$function$;
REVOKE ALL ON FUNCTION ferry.rules_private_members(regclass) FROM PUBLIC;

-- The policies p_table's rule asks for (0019, 0025), with grants: an owned
-- table's read policy also admits the ids of each grant rule's function, and
-- its write policy does not; a child of a granted table writes only through a
-- parent readable other than by a grant; a members table of a granted table
-- reads its scope row through the scope's private test, so that members stay
-- private; a grant table is read by whoever reads its through row, and written
-- by whoever owns both rows. The members table of a grant's through table (a
-- class's students) is read by the scope's owner and each row's own member
-- only (ferry.rules_private_members). An owned table's scope ids (its members
-- and grant rules' functions) are one array, read in one init plan.
-- (Versioned definitions before this file: 0019, 0025, 0033.)
CREATE OR REPLACE FUNCTION ferry.rules_policies(p_table regclass)
 RETURNS jsonb
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_rule ferry.sync_rules;
    v_name name;
    v_read text;
    v_write text;
    v_create text;
    v_links text := '';
    v_member record;
    v_owner_of_scope text;
    v_scope_rule ferry.sync_rules;
    v_scope_read text;
    v_through regclass;
    v_ids text;
BEGIN
    SELECT * INTO v_rule FROM ferry.sync_rules r WHERE r.table_oid = p_table;
    SELECT c.relname INTO v_name FROM pg_class c WHERE c.oid = p_table;
    SELECT coalesce(string_agg(ferry.rules_readable(p_table, l, ferry.rules_reference(p_table, l)), ' AND '), '')
      INTO v_links FROM unnest(v_rule.links) l;

    IF v_rule.kind = 'owned' THEN
        v_create := format('%I.%I = ferry.current_user_id()', v_name, v_rule.rule_column);
        -- The members rules' scope ids in one init plan, their arrays joined (issue 47:
        -- PostgreSQL sets up every init plan of a policy in each statement, used or
        -- not, and a write of a child applies the parent's read policy twice).
        SELECT string_agg(ferry.rules_scope_ids_function(m.table_oid), ' || ' ORDER BY m.table_oid::oid) INTO v_ids
          FROM ferry.sync_rules m WHERE m.kind = 'members' AND m.target_table = p_table;
        v_read := v_create || CASE WHEN v_ids IS NOT NULL THEN format(' OR %I.id = ANY ((SELECT %s)::%s[])', v_name,
                                                                       v_ids, ferry.rules_id_type(p_table)) ELSE '' END;
    ELSIF v_rule.kind = 'child' THEN
        v_read := ferry.rules_readable(p_table, v_rule.rule_column, v_rule.target_table);
        v_create := v_read;
        IF ferry.rules_granted_table(v_rule.target_table) THEN
            -- The parent's private check (ferry.rules_apply_private_check), not a subquery
            -- of the parent under its read policy: no subplans in a write's plan (issue 47:
            -- a PATCH planned 27). The same rows.
            v_create := format('%s(%I.%I)', ferry.rules_private_check(v_rule.target_table), v_name, v_rule.rule_column);
        END IF;
    ELSIF v_rule.kind = 'grant' THEN
        v_through := ferry.rules_reference(p_table, v_rule.member_column);
        v_owner_of_scope := format(
            'EXISTS (SELECT 1 FROM %s t WHERE t.id = %I.%I AND t.%I = ferry.current_user_id()) '
            'AND EXISTS (SELECT 1 FROM %s s WHERE s.id = %I.%I AND s.%I = ferry.current_user_id())',
            v_through, v_name, v_rule.member_column, (SELECT o.rule_column FROM ferry.sync_rules o WHERE o.table_oid = v_through),
            v_rule.target_table, v_name, v_rule.rule_column,
            (SELECT o.rule_column FROM ferry.sync_rules o WHERE o.table_oid = v_rule.target_table));
        RETURN jsonb_build_object(
            'ferry_rules_read', jsonb_build_object('cmd', 'SELECT', 'using',
                ferry.rules_readable(p_table, v_rule.member_column, v_through)),
            'ferry_rules_create', jsonb_build_object('cmd', 'INSERT', 'check', v_owner_of_scope),
            'ferry_rules_write', jsonb_build_object('cmd', 'UPDATE', 'using', v_owner_of_scope, 'check', v_owner_of_scope));
    ELSE
        SELECT * INTO v_scope_rule FROM ferry.sync_rules o WHERE o.table_oid = v_rule.target_table;
        v_owner_of_scope := format('EXISTS (SELECT 1 FROM %s s WHERE s.id = %I.%I AND s.%I = ferry.current_user_id())',
                                   v_rule.target_table, v_name, v_rule.rule_column, v_scope_rule.rule_column);
        v_scope_read := ferry.rules_readable(p_table, v_rule.rule_column, v_rule.target_table);
        IF v_scope_rule.public_column IS NOT NULL OR ferry.rules_granted_table(v_rule.target_table) THEN
            -- The scope's private test (its owner, or a live membership of the
            -- caller's), not its read policy, which admits public and granted rows.
            v_scope_read := format('EXISTS (SELECT 1 FROM %s r WHERE r.id = %I.%I AND (r.%I = ferry.current_user_id() OR r.id = ANY ((SELECT %s)::%s[])))',
                                   v_rule.target_table, v_name, v_rule.rule_column, v_scope_rule.rule_column,
                                   ferry.rules_scope_ids_function(p_table), ferry.rules_id_type(v_rule.target_table));
        END IF;
        IF ferry.rules_private_members(p_table) THEN
            v_scope_read := v_owner_of_scope;
        END IF;
        RETURN jsonb_build_object(
            'ferry_rules_read', jsonb_build_object('cmd', 'SELECT', 'using',
                format('%I.%I = ferry.current_user_id() OR %s', v_name, v_rule.member_column, v_scope_read)),
            'ferry_rules_create', jsonb_build_object('cmd', 'INSERT', 'check', v_owner_of_scope),
            'ferry_rules_write', jsonb_build_object('cmd', 'UPDATE', 'using', v_owner_of_scope, 'check', v_owner_of_scope));
    END IF;

    v_write := CASE WHEN v_rule.kind = 'child' THEN v_create ELSE v_read END;
    IF v_rule.kind = 'owned' THEN
        -- The grant rules' scope ids join the members rules' (one init plan).
        SELECT concat_ws(' || ', v_ids, string_agg(ferry.rules_scope_ids_function(g.table_oid), ' || ' ORDER BY g.table_oid::oid))
          INTO v_ids FROM ferry.sync_rules g WHERE g.kind = 'grant' AND g.target_table = p_table;
        v_read := v_create || CASE WHEN v_ids <> '' THEN format(' OR %I.id = ANY ((SELECT %s)::%s[])', v_name,
                                                                 v_ids, ferry.rules_id_type(p_table)) ELSE '' END;
    END IF;
    IF v_rule.kind = 'owned' AND v_rule.public_column IS NOT NULL THEN
        v_read := format('(%s) OR (%I.%I AND ferry.public_reads())', v_read, v_name, v_rule.public_column);
    END IF;

    IF v_read = v_create AND v_links = '' THEN
        -- One policy for every command, as a hand-written one would be: the same
        -- test, planned once per statement whatever the command.
        RETURN jsonb_build_object('ferry_rules_all', jsonb_build_object('cmd', 'ALL', 'using', v_read, 'check', v_read));
    END IF;
    RETURN jsonb_build_object(
        'ferry_rules_read', jsonb_build_object('cmd', 'SELECT', 'using', v_read),
        'ferry_rules_create', jsonb_build_object('cmd', 'INSERT', 'check',
            CASE WHEN v_links = '' THEN v_create ELSE format('(%s) AND %s', v_create, v_links) END),
        'ferry_rules_write', jsonb_build_object('cmd', 'UPDATE', 'using', v_write, 'check',
            CASE WHEN v_links = '' THEN v_write ELSE format('(%s) AND (%I.is_deleted OR %s)', v_write, v_name, v_links) END));
END
$function$;
REVOKE ALL ON FUNCTION ferry.rules_policies(regclass) FROM PUBLIC;

-- The columns of p_table a client may write: {"insert": [...], "update": [...]}.
-- (Versioned definitions before this file: 0019.)
CREATE OR REPLACE FUNCTION ferry.rules_writable(p_table regclass)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
RETURN (WITH r AS (SELECT sync_rules.table_oid, sync_rules.kind, sync_rules.rule_column, sync_rules.target_table, sync_rules.member_column, sync_rules.links, sync_rules.fixed, sync_rules.read_only, sync_rules.policies, sync_rules.created_at FROM ferry.sync_rules WHERE ((sync_rules.table_oid)::oid = (rules_writable.p_table)::oid)), cols AS (SELECT a.attname AS name, a.attnum FROM pg_attribute a, r WHERE ((a.attrelid = (rules_writable.p_table)::oid) AND (a.attnum > 0) AND (NOT a.attisdropped) AND (a.attname <> ALL (ARRAY['revision'::name, 'last_modified'::name])) AND ("left"((a.attname)::text, 7) <> '_ferry_'::text) AND (a.attgenerated = ''::"char") AND (a.attname <> ALL (r.read_only)))), fixed AS (SELECT unnest((((r.fixed || r.links) || ARRAY[r.rule_column, 'id'::name]) || CASE WHEN (r.member_column IS NULL) THEN '{}'::name[] ELSE ARRAY[r.member_column] END)) AS name FROM r) SELECT jsonb_build_object('insert', COALESCE((SELECT jsonb_agg(c.name ORDER BY c.attnum) AS jsonb_agg FROM cols c WHERE (c.name <> 'is_deleted'::name)), '[]'::jsonb), 'update', COALESCE((SELECT jsonb_agg(c.name ORDER BY c.attnum) AS jsonb_agg FROM cols c WHERE (NOT (c.name IN (SELECT fixed.name FROM fixed)))), '[]'::jsonb)) AS jsonb_build_object);
REVOKE ALL ON FUNCTION ferry.rules_writable(regclass) FROM PUBLIC;

-- What ferry_app may write of p_table now, in the same shape.
-- (Versioned definitions before this file: 0019.)
CREATE OR REPLACE FUNCTION ferry.rules_granted(p_table regclass)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
RETURN jsonb_build_object('insert', COALESCE((SELECT jsonb_agg(a.attname ORDER BY a.attnum) AS jsonb_agg FROM pg_attribute a WHERE ((a.attrelid = (rules_granted.p_table)::oid) AND (a.attnum > 0) AND (NOT a.attisdropped) AND has_column_privilege('ferry_app'::name, (rules_granted.p_table)::oid, a.attnum, 'INSERT'::text))), '[]'::jsonb), 'update', COALESCE((SELECT jsonb_agg(a.attname ORDER BY a.attnum) AS jsonb_agg FROM pg_attribute a WHERE ((a.attrelid = (rules_granted.p_table)::oid) AND (a.attnum > 0) AND (NOT a.attisdropped) AND has_column_privilege('ferry_app'::name, (rules_granted.p_table)::oid, a.attnum, 'UPDATE'::text))), '[]'::jsonb), 'select', has_table_privilege('ferry_app'::name, (p_table)::oid, 'SELECT'::text), 'delete', has_table_privilege('ferry_app'::name, (p_table)::oid, 'DELETE'::text));
REVOKE ALL ON FUNCTION ferry.rules_granted(regclass) FROM PUBLIC;

-- Creates an index on every foreign key of p_table that no index leads with
-- ((parent, rank, id) for the parent of a ranked child). Takes no lock when
-- there is nothing to do.
-- (Versioned definitions before this file: 0019, 0021; the comment is 0019's.)
CREATE OR REPLACE FUNCTION ferry.rules_index_references(p_table regclass)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    PERFORM ferry.rules_index_foreign_keys(p_table);
    PERFORM ferry.rules_feed_indexes(p_table);
END
$function$;
GRANT EXECUTE ON FUNCTION ferry.rules_index_references(regclass) TO PUBLIC;

-- Brings everything p_table's rule generates up to date, changing only what
-- differs (a policy, trigger or grant replaced takes a lock on the table).
-- (Versioned definitions before this file: 0019.)
CREATE OR REPLACE FUNCTION ferry.rules_apply(p_table regclass)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_rule ferry.sync_rules;
    v_policies jsonb := ferry.rules_policies(p_table);
    v_policy record;
    v_writable jsonb := ferry.rules_writable(p_table);
    v_schema name;
    v_function text;
    v_source text;
    v_target regclass;
BEGIN
    SELECT * INTO v_rule FROM ferry.sync_rules r WHERE r.table_oid = p_table;
    SELECT n.nspname INTO v_schema FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = p_table;

    IF NOT (SELECT c.relrowsecurity FROM pg_class c WHERE c.oid = p_table) THEN
        EXECUTE format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', p_table);
    END IF;

    -- A members rule's array of the caller's scope ids, before the policies that call it.
    IF v_rule.kind = 'members' THEN
        v_function := ferry.rules_scope_ids_function(p_table);
        -- PL/pgSQL, not SQL: a SQL function that cannot be inlined (SECURITY DEFINER) is
        -- planned again in every statement that calls it (~0.2-0.4 ms each, and every
        -- policy of a scope's tables calls one), where PL/pgSQL keeps its plan for the session.
        v_source := format($f$
            BEGIN RETURN (SELECT coalesce(array_agg(m.%1$I), '{}') FROM %2$s m
             WHERE m.%3$I = ferry.current_user_id() AND NOT m.is_deleted); END
            $f$, v_rule.rule_column, p_table, v_rule.member_column);
        IF to_regprocedure(v_function) IS NULL
           OR (SELECT p.prosrc FROM pg_proc p WHERE p.oid = to_regprocedure(v_function)) IS DISTINCT FROM v_source THEN
            EXECUTE format($f$
                CREATE OR REPLACE FUNCTION %s RETURNS %s[] LANGUAGE plpgsql STABLE SECURITY DEFINER
                    SET search_path = pg_catalog, pg_temp AS %L
                $f$, v_function, (SELECT format_type(a.atttypid, a.atttypmod) FROM pg_attribute a
                                   WHERE a.attrelid = v_rule.target_table AND a.attname = 'id'), v_source);
            EXECUTE format('COMMENT ON FUNCTION %s IS %L', v_function,
                           format('Generated by ferry.sync_members for %s: the caller''s live scope ids. Do not edit.', p_table));
            EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', v_function);
            EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO ferry_app', v_function);
        END IF;
    END IF;

    -- A child of a granted table writes through its parent's private check.
    IF v_rule.kind = 'child' AND ferry.rules_granted_table(v_rule.target_table) THEN
        PERFORM ferry.rules_apply_private_check(v_rule.target_table);
    END IF;

    IF v_rule.policies IS DISTINCT FROM v_policies OR EXISTS (
        SELECT 1 FROM jsonb_object_keys(v_policies) k
         WHERE NOT EXISTS (SELECT 1 FROM pg_policy p WHERE p.polrelid = p_table AND p.polname = k)) THEN
        FOR v_policy IN SELECT p.polname FROM pg_policy p WHERE p.polrelid = p_table AND p.polname LIKE 'ferry\_rules\_%' LOOP
            EXECUTE format('DROP POLICY %I ON %s', v_policy.polname, p_table);
        END LOOP;
        FOR v_policy IN SELECT key AS name, value FROM jsonb_each(v_policies) ORDER BY key LOOP
            EXECUTE format('CREATE POLICY %I ON %s FOR %s%s%s', v_policy.name, p_table, v_policy.value ->> 'cmd',
                           CASE WHEN v_policy.value ? 'using' THEN format(' USING (%s)', v_policy.value ->> 'using') ELSE '' END,
                           CASE WHEN v_policy.value ? 'check' THEN format(' WITH CHECK (%s)', v_policy.value ->> 'check') ELSE '' END);
        END LOOP;
        UPDATE ferry.sync_rules SET policies = v_policies WHERE table_oid = p_table;
    END IF;

    IF ferry.rules_granted(p_table) IS DISTINCT FROM v_writable || '{"select": true, "delete": false}' THEN
        EXECUTE format('REVOKE ALL ON %s FROM ferry_app', p_table);
        EXECUTE format('GRANT SELECT ON %s TO ferry_app', p_table);
        IF jsonb_array_length(v_writable -> 'insert') > 0 THEN
            EXECUTE format('GRANT INSERT (%s) ON %s TO ferry_app',
                           (SELECT string_agg(quote_ident(c), ', ') FROM jsonb_array_elements_text(v_writable -> 'insert') c), p_table);
        END IF;
        IF jsonb_array_length(v_writable -> 'update') > 0 THEN
            EXECUTE format('GRANT UPDATE (%s) ON %s TO ferry_app',
                           (SELECT string_agg(quote_ident(c), ', ') FROM jsonb_array_elements_text(v_writable -> 'update') c), p_table);
        END IF;
    END IF;
    IF NOT has_schema_privilege('ferry_app', v_schema, 'USAGE') THEN
        EXECUTE format('GRANT USAGE ON SCHEMA %I TO ferry_app', v_schema);
    END IF;

    PERFORM ferry.rules_index_references(p_table);

    -- The access scopes this table is a member of.
    DELETE FROM ferry.access_scopes s WHERE s.member_table = p_table AND NOT EXISTS (
        SELECT 1 FROM ferry.rules_scopes() d WHERE d.scope_table = s.scope_table AND d.member_table = s.member_table);
    INSERT INTO ferry.access_scopes (scope_table, member_table, member_column, read_through_scope)
    SELECT d.scope_table, d.member_table, d.member_column, d.read_through_scope FROM ferry.rules_scopes() d
     WHERE d.member_table = p_table
    ON CONFLICT (scope_table, member_table) DO UPDATE
        SET member_column = excluded.member_column, read_through_scope = excluded.read_through_scope
      WHERE (ferry.access_scopes.member_column, ferry.access_scopes.read_through_scope)
            IS DISTINCT FROM (excluded.member_column, excluded.read_through_scope);

    -- Its notify trigger names private members (ferry.sync_notify_source), so a
    -- grant rule added or dropped through this table's scope regenerates it.
    IF v_rule.kind = 'members' THEN
        PERFORM ferry.refresh_sync_notify(p_table);
    END IF;

    -- Membership: record access granted and lost.
    IF v_rule.kind = 'members' AND NOT EXISTS (
        SELECT 1 FROM pg_trigger t WHERE t.tgrelid = p_table AND t.tgname = 'zz_ferry_rules_members') THEN
        EXECUTE format('CREATE TRIGGER zz_ferry_rules_members AFTER INSERT OR UPDATE ON %s FOR EACH ROW '
                       'EXECUTE FUNCTION ferry.rules_membership_changed(%L, %L, %L)',
                       p_table, v_rule.target_table::oid, v_rule.rule_column, v_rule.member_column);
    END IF;

    -- Children (and rows linking here) follow a deleted row of their parent.
    FOR v_target IN
        SELECT DISTINCT t FROM (
            SELECT v_rule.target_table AS t WHERE v_rule.kind = 'child'
            UNION ALL SELECT ferry.rules_reference(p_table, l) FROM unnest(v_rule.links) l) x
    LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgrelid = v_target AND t.tgname = 'zz_ferry_rules_children') THEN
            EXECUTE format('CREATE TRIGGER zz_ferry_rules_children AFTER UPDATE ON %s FOR EACH ROW '
                           'WHEN (NEW.is_deleted AND NOT OLD.is_deleted) EXECUTE FUNCTION ferry.rules_delete_children()',
                           v_target);
        END IF;
    END LOOP;
END
$function$;
REVOKE ALL ON FUNCTION ferry.rules_apply(regclass) FROM PUBLIC;

-- Every access-scope row the rules ask for (0019, 0025), and those of grants:
-- a granted table is a scope of its own (itself and its children), and a grant
-- table is a member of its through row's scope (read while that row is).
-- (Versioned definitions before this file: 0019, 0025, 0033.)
CREATE OR REPLACE FUNCTION ferry.rules_scopes()
 RETURNS TABLE(scope_table regclass, member_table regclass, member_column name, read_through_scope boolean)
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
    SELECT DISTINCT o.table_oid, o.table_oid, 'id'::name, false
      FROM ferry.sync_rules o
     WHERE o.kind = 'owned' AND (o.public_column IS NOT NULL
           OR EXISTS (SELECT 1 FROM ferry.sync_rules m WHERE m.kind IN ('members', 'grant') AND m.target_table = o.table_oid))
    UNION ALL
    SELECT m.target_table, m.table_oid, m.rule_column, false
      FROM ferry.sync_rules m WHERE m.kind = 'members'
    UNION ALL
    SELECT ferry.rules_reference(g.table_oid, g.member_column), g.table_oid, g.member_column, true
      FROM ferry.sync_rules g WHERE g.kind = 'grant'
    UNION ALL
    SELECT c.target_table, c.table_oid, c.rule_column, true
      FROM ferry.sync_rules c
     WHERE c.kind = 'child' AND EXISTS (
           SELECT 1 FROM ferry.sync_rules m
            WHERE (m.kind IN ('members', 'grant') AND m.target_table = c.target_table)
               OR (m.table_oid = c.target_table AND m.public_column IS NOT NULL));
$function$;
REVOKE ALL ON FUNCTION ferry.rules_scopes() FROM PUBLIC;

-- AFTER INSERT OR UPDATE on a members table (TG_ARGV: the scope table's oid,
-- the scope column, the member column). A live row grants its member the scope
-- row; a row that stops being live, or whose member or scope changes, revokes.
-- (Versioned definitions before this file: 0019.)
CREATE OR REPLACE FUNCTION ferry.rules_membership_changed()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_scope regclass := TG_ARGV[0]::oid::regclass;
    v_new jsonb := to_jsonb(NEW);
    v_old jsonb := CASE WHEN TG_OP = 'UPDATE' THEN to_jsonb(OLD) END;
    v_moved boolean := TG_OP = 'UPDATE'
        AND (v_new -> TG_ARGV[1] IS DISTINCT FROM v_old -> TG_ARGV[1] OR v_new -> TG_ARGV[2] IS DISTINCT FROM v_old -> TG_ARGV[2]);
BEGIN
    IF TG_OP = 'UPDATE' AND NOT (v_old ->> 'is_deleted')::boolean AND ((v_new ->> 'is_deleted')::boolean OR v_moved) THEN
        PERFORM ferry.record_access_revocation((v_old ->> TG_ARGV[2])::uuid, v_scope, v_old ->> TG_ARGV[1]);
    END IF;
    IF NOT (v_new ->> 'is_deleted')::boolean
       AND (TG_OP = 'INSERT' OR (v_old ->> 'is_deleted')::boolean OR v_moved) THEN
        PERFORM ferry.record_access_grant((v_new ->> TG_ARGV[2])::uuid, v_scope, v_new ->> TG_ARGV[1]);
    END IF;
    RETURN NULL;
END
$function$;
REVOKE ALL ON FUNCTION ferry.rules_membership_changed() FROM PUBLIC;

-- AFTER UPDATE of a row to deleted (0019): also deletes the grant rows that
-- point at it, by either column.
-- (Versioned definitions before this file: 0019, 0033.)
CREATE OR REPLACE FUNCTION ferry.rules_delete_children()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_child record;
BEGIN
    FOR v_child IN
        SELECT r.table_oid, r.rule_column AS reference FROM ferry.sync_rules r
         WHERE r.kind IN ('child', 'grant') AND r.target_table = TG_RELID
        UNION
        SELECT r.table_oid, r.member_column FROM ferry.sync_rules r
         WHERE r.kind = 'grant' AND ferry.rules_reference(r.table_oid, r.member_column) = TG_RELID
        UNION
        SELECT r.table_oid, l FROM ferry.sync_rules r, unnest(r.links) l
         WHERE ferry.rules_reference(r.table_oid, l) = TG_RELID
    LOOP
        EXECUTE format('UPDATE %s SET is_deleted = true WHERE %I = $1 AND NOT is_deleted', v_child.table_oid, v_child.reference)
          USING NEW.id;
    END LOOP;
    RETURN NULL;
END
$function$;
REVOKE ALL ON FUNCTION ferry.rules_delete_children() FROM PUBLIC;

-- 0019's, with grant rules: they are applied after the members rules whose
-- tables their functions read, and before the owned tables whose policies call them.
-- (Versioned definitions before this file: 0019, 0033.)
CREATE OR REPLACE FUNCTION ferry.refresh_sync_rules()
 RETURNS integer
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_rule record;
    v_count int := 0;
BEGIN
    -- Forget rules of dropped tables first.
    DELETE FROM ferry.sync_rules r WHERE NOT EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = r.table_oid);
    FOR v_rule IN
        SELECT r.table_oid, r.kind FROM ferry.sync_rules r
         ORDER BY CASE r.kind WHEN 'members' THEN 0 WHEN 'grant' THEN 1 WHEN 'owned' THEN 2 ELSE 3 END, r.table_oid::oid
    LOOP
        IF v_rule.kind = 'grant' THEN
            PERFORM ferry.rules_apply_grant(v_rule.table_oid);
        END IF;
        PERFORM ferry.rules_apply(v_rule.table_oid);
        v_count := v_count + 1;
    END LOOP;
    -- Private checks no child writes through any more (their policies were made again above).
    FOR v_rule IN
        SELECT f.oid::regprocedure AS check_function FROM pg_proc f
         WHERE f.proname LIKE '\_ferry\_writes\_%'
           AND obj_description(f.oid, 'pg_proc') LIKE 'Generated by ferry.rules_apply_private_check %'
           AND NOT EXISTS (SELECT 1 FROM ferry.sync_rules c
                            WHERE c.kind = 'child' AND ferry.rules_granted_table(c.target_table)
                              AND to_regproc(ferry.rules_private_check(c.target_table)) = f.oid)
    LOOP
        EXECUTE format('DROP FUNCTION %s', v_rule.check_function);
    END LOOP;
    RETURN v_count;
END
$function$;
REVOKE ALL ON FUNCTION ferry.refresh_sync_rules() FROM PUBLIC;

-- Checks and records a rule, then generates what it asks for.
-- (Versioned definitions before this file: 0019.)
CREATE OR REPLACE FUNCTION ferry.rules_add(p_table regclass, p_kind text, p_column name, p_target regclass, p_member name, p_links name[], p_fixed name[], p_read_only name[])
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_existing ferry.sync_rules;
    v_own text;
    v_column name;
BEGIN
    SELECT * INTO v_existing FROM ferry.sync_rules r WHERE r.table_oid = p_table;
    IF FOUND THEN
        RAISE EXCEPTION USING ERRCODE = '42710',
            MESSAGE = format('%s already has a sync rule (%s, by %I): a table has one rule', p_table, v_existing.kind,
                             v_existing.rule_column),
            HINT = format('To state it differently, SELECT ferry.drop_sync_rules(%L) first, in the same migration.',
                          p_table::text);
    END IF;
    SELECT string_agg(quote_ident(p.polname), ', ' ORDER BY p.polname) INTO v_own
      FROM pg_policy p WHERE p.polrelid = p_table AND p.polname NOT LIKE 'ferry\_rules\_%';
    IF v_own IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = '55000',
            MESSAGE = format('%s has row level security policies of its own (%s): the rules write every policy of a table',
                             p_table, v_own),
            HINT = format('Drop them in the same migration first (DROP POLICY <name> ON %s), or keep writing this table''s SQL by hand.', p_table);
    END IF;
    FOREACH v_column IN ARRAY p_links || p_fixed || p_read_only LOOP
        PERFORM ferry.rules_column_type(p_table, v_column, CASE
            WHEN v_column = ANY (p_links) THEN 'links' WHEN v_column = ANY (p_fixed) THEN 'fixed' ELSE 'read_only' END);
        IF v_column IN ('id', 'revision', 'last_modified', 'is_deleted', p_column, p_member) THEN
            RAISE EXCEPTION USING ERRCODE = '22023',
                MESSAGE = format('%s.%I cannot be listed in links, fixed or read_only: Ferry or the rule itself decides who writes it',
                                 p_table, v_column);
        END IF;
    END LOOP;
    FOREACH v_column IN ARRAY p_links LOOP
        PERFORM ferry.rules_synced_reference(p_table, v_column, 'links');
    END LOOP;

    -- A table synced already (by hand, before the rule) keeps its sync columns as they are.
    IF NOT EXISTS (SELECT 1 FROM ferry.synced_tables s WHERE s.table_oid = p_table) THEN
        PERFORM ferry.enable_sync(p_table);
    END IF;
    INSERT INTO ferry.sync_rules (table_oid, kind, rule_column, target_table, member_column, links, fixed, read_only)
    VALUES (p_table, p_kind, p_column, p_target, p_member, p_links, p_fixed, p_read_only);
    PERFORM ferry.refresh_sync_rules();
END
$function$;
REVOKE ALL ON FUNCTION ferry.rules_add(regclass,text,name,regclass,name,name[],name[],name[]) FROM PUBLIC;

-- owned: rows belong to the user in p_owner (uuid; defaults to the caller).
-- (Versioned definitions before this file: 0019.)
CREATE OR REPLACE FUNCTION ferry.sync_owned(p_table regclass, owner name DEFAULT 'owner_id'::name, links name[] DEFAULT '{}'::name[], fixed name[] DEFAULT '{}'::name[], read_only name[] DEFAULT '{}'::name[])
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_type text := ferry.rules_column_type(p_table, sync_owned.owner, 'owner');
BEGIN
    IF v_type <> 'uuid' THEN
        RAISE EXCEPTION USING ERRCODE = '42804',
            MESSAGE = format('%s.%I (named as owner) must be uuid, the user''s id, not %s', p_table, sync_owned.owner, v_type);
    END IF;
    -- Validated before anything changes: the rule's other columns, and the table's shape.
    PERFORM ferry.rules_add(p_table, 'owned', sync_owned.owner, NULL, NULL, sync_owned.links, sync_owned.fixed,
                            sync_owned.read_only);
    EXECUTE format('ALTER TABLE %s ALTER COLUMN %I SET DEFAULT ferry.current_user_id()', p_table, sync_owned.owner);
    IF NOT (SELECT a.attnotnull FROM pg_attribute a WHERE a.attrelid = p_table AND a.attname = sync_owned.owner) THEN
        EXECUTE format('ALTER TABLE %s ALTER COLUMN %I SET NOT NULL', p_table, sync_owned.owner);
    END IF;
END
$function$;
REVOKE ALL ON FUNCTION ferry.sync_owned(regclass,name,name[],name[],name[]) FROM PUBLIC;

-- child: rows readable and writable through the row p_parent points at.
-- (Versioned definitions before this file: 0019.)
CREATE OR REPLACE FUNCTION ferry.sync_child(p_table regclass, parent name, links name[] DEFAULT '{}'::name[], fixed name[] DEFAULT '{}'::name[], read_only name[] DEFAULT '{}'::name[])
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    PERFORM ferry.rules_add(p_table, 'child', sync_child.parent,
                            ferry.rules_synced_reference(p_table, sync_child.parent, 'parent'), NULL,
                            sync_child.links, sync_child.fixed, sync_child.read_only);
END
$function$;
REVOKE ALL ON FUNCTION ferry.sync_child(regclass,name,name[],name[],name[]) FROM PUBLIC;

-- members: a live row gives p_member access to the owned row p_scope points at.
-- (Versioned definitions before this file: 0019.)
CREATE OR REPLACE FUNCTION ferry.sync_members(p_table regclass, scope name, member name DEFAULT 'user_id'::name, fixed name[] DEFAULT '{}'::name[], read_only name[] DEFAULT '{}'::name[])
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_scope regclass;
    v_type text;
BEGIN
    PERFORM ferry.rules_column_type(p_table, sync_members.scope, 'scope');
    v_scope := ferry.rules_reference(p_table, sync_members.scope);
    IF v_scope IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = '42830',
            MESSAGE = format('%s.%I (named as scope) is not a foreign key: a membership rule needs a foreign key to the table it shares',
                             p_table, sync_members.scope),
            HINT = format('ALTER TABLE %s ADD FOREIGN KEY (%I) REFERENCES <the shared table>;', p_table, sync_members.scope);
    END IF;
    IF NOT EXISTS (SELECT 1 FROM ferry.sync_rules r WHERE r.table_oid = v_scope AND r.kind = 'owned') THEN
        RAISE EXCEPTION USING ERRCODE = '55000',
            MESSAGE = format('%s.%I points at %s, which has no owned rule: members share an owned table (its owner adds and removes them)',
                             p_table, sync_members.scope, v_scope),
            HINT = format('SELECT ferry.sync_owned(%L, owner => ...) first.', v_scope::text);
    END IF;
    v_type := ferry.rules_column_type(p_table, sync_members.member, 'member');
    IF v_type <> 'uuid' THEN
        RAISE EXCEPTION USING ERRCODE = '42804',
            MESSAGE = format('%s.%I (named as member) must be uuid, the user''s id, not %s', p_table, sync_members.member, v_type);
    END IF;
    PERFORM ferry.rules_add(p_table, 'members', sync_members.scope, v_scope, sync_members.member, '{}',
                            sync_members.fixed, sync_members.read_only);
END
$function$;
REVOKE ALL ON FUNCTION ferry.sync_members(regclass,name,name,name[],name[]) FROM PUBLIC;

-- 0019's, with grant rules: a table a grant rule reads or reaches through is
-- not dropped from under it, and a grant rule's generated objects go with it.
-- (Versioned definitions before this file: 0019, 0033.)
CREATE OR REPLACE FUNCTION ferry.drop_sync_rules(p_table regclass)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_rule ferry.sync_rules;
    v_policy name;
BEGIN
    SELECT string_agg(r.table_oid::text, ', ' ORDER BY r.table_oid::text) INTO v_policy
      FROM ferry.sync_rules r WHERE r.kind = 'members' AND r.target_table = p_table;
    IF v_policy IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = '2BP01',
            MESSAGE = format('%s is shared by the members rule of %s: drop that rule first', p_table, v_policy),
            HINT = 'Drop the members rule, restate this one, then state the members rule again, in one migration.';
    END IF;
    SELECT string_agg(r.table_oid::text, ', ' ORDER BY r.table_oid::text) INTO v_policy
      FROM ferry.sync_rules r WHERE r.kind = 'grant' AND (r.target_table = p_table OR ferry.rules_through(r.table_oid) = p_table);
    IF v_policy IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = '2BP01',
            MESSAGE = format('%s is read or reached through by the grant rule of %s: drop that rule first', p_table, v_policy),
            HINT = 'Drop the grant rule, restate this one, then state the grant rule again, in one migration.';
    END IF;
    DELETE FROM ferry.sync_rules r WHERE r.table_oid = p_table RETURNING * INTO v_rule;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = '42704', MESSAGE = format('%s has no sync rule to drop', p_table);
    END IF;
    FOR v_policy IN SELECT p.polname FROM pg_policy p WHERE p.polrelid = p_table AND p.polname LIKE 'ferry\_rules\_%' LOOP
        EXECUTE format('DROP POLICY %I ON %s', v_policy, p_table);
    END LOOP;
    EXECUTE format('REVOKE ALL ON %s FROM ferry_app', p_table);
    EXECUTE format('DROP TRIGGER IF EXISTS zz_ferry_rules_members ON %s', p_table);
    EXECUTE format('DROP TRIGGER IF EXISTS zz_ferry_rules_grants ON %s', p_table);
    EXECUTE format('DROP TRIGGER IF EXISTS zz_ferry_rules_grant ON %s', p_table);
    DELETE FROM ferry.access_scopes s WHERE s.member_table = p_table
        OR (s.scope_table = v_rule.target_table AND v_rule.kind IN ('members', 'grant')
            AND NOT EXISTS (SELECT 1 FROM ferry.rules_scopes() d WHERE d.scope_table = s.scope_table AND d.member_table = s.member_table));
    -- The policies that called the scope-ids function are regenerated without it first.
    PERFORM ferry.refresh_sync_rules();
    IF v_rule.kind IN ('members', 'grant') THEN
        EXECUTE format('DROP FUNCTION IF EXISTS %s', ferry.rules_scope_ids_function(p_table));
    END IF;
END
$function$;
REVOKE ALL ON FUNCTION ferry.drop_sync_rules(regclass) FROM PUBLIC;

-- The foreign-key indexes 0019 creates keep their function under a new name;
-- ferry.rules_index_references (which ferry.rules_apply calls) now creates both.
-- (Versioned definitions before this file: 0021.)
CREATE OR REPLACE FUNCTION ferry.rules_index_foreign_keys(p_table regclass)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_key record;
    v_columns text[];
    v_name text;
    v_parent name;
BEGIN
    SELECT r.rule_column INTO v_parent FROM ferry.sync_rules r WHERE r.table_oid = p_table AND r.kind = 'child'
       AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = p_table AND a.attname = 'rank' AND NOT a.attisdropped);
    FOR v_key IN
        SELECT c.conkey, (SELECT array_agg(a.attname::text ORDER BY k.n) FROM unnest(c.conkey) WITH ORDINALITY k(attnum, n)
                            JOIN pg_attribute a ON a.attrelid = p_table AND a.attnum = k.attnum) AS names
          FROM pg_constraint c WHERE c.conrelid = p_table AND c.contype = 'f' ORDER BY c.conname
    LOOP
        v_columns := v_key.names;
        IF v_parent IS NOT NULL AND v_columns = ARRAY[v_parent::text] THEN
            v_columns := v_columns || ARRAY['rank', 'id'];
        END IF;
        CONTINUE WHEN EXISTS (
            SELECT 1 FROM pg_index i
             WHERE i.indrelid = p_table AND i.indpred IS NULL
               AND (i.indkey::int2[])[0:cardinality(v_columns) - 1] = (
                   SELECT array_agg(a.attnum ORDER BY k.n) FROM unnest(v_columns) WITH ORDINALITY k(name, n)
                     JOIN pg_attribute a ON a.attrelid = p_table AND a.attname = k.name));
        v_name := left((SELECT c.relname FROM pg_class c WHERE c.oid = p_table) || '_' || array_to_string(v_columns, '_'), 59) || '_idx';
        EXECUTE format('CREATE INDEX %I ON %s (%s)', v_name, p_table,
                       (SELECT string_agg(quote_ident(x), ', ') FROM unnest(v_columns) x));
    END LOOP;
END
$function$;
REVOKE ALL ON FUNCTION ferry.rules_index_foreign_keys(regclass) FROM PUBLIC;

-- Creates the (column, _ferry_xid, id) index of each of p_table's read paths
-- that no index leads with already. Takes no lock when there is nothing to do.
-- (Versioned definitions before this file: 0021.)
CREATE OR REPLACE FUNCTION ferry.rules_feed_indexes(p_table regclass)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_column name;
    v_attnums int2[];
BEGIN
    FOR v_column IN
        SELECT c FROM ferry.sync_rules r, unnest(ARRAY[r.rule_column, r.member_column]) c
         WHERE r.table_oid = p_table AND c IS NOT NULL
    LOOP
        SELECT array_agg(a.attnum ORDER BY k.n) INTO v_attnums
          FROM unnest(ARRAY[v_column, '_ferry_xid'::name]) WITH ORDINALITY k(name, n)
          JOIN pg_attribute a ON a.attrelid = p_table AND a.attname = k.name AND NOT a.attisdropped;
        CONTINUE WHEN cardinality(v_attnums) < 2 OR EXISTS (
            SELECT 1 FROM pg_index i
             WHERE i.indrelid = p_table AND i.indpred IS NULL AND (i.indkey::int2[])[0:1] = v_attnums);
        EXECUTE format('CREATE INDEX %I ON %s (%I, _ferry_xid, id)',
                       left((SELECT c.relname FROM pg_class c WHERE c.oid = p_table) || '_' || v_column, 54) || '_feed_idx',
                       p_table, v_column);
    END LOOP;
END
$function$;
GRANT EXECUTE ON FUNCTION ferry.rules_feed_indexes(regclass) TO PUBLIC;

-- AFTER UPDATE OF the public column (TG_ARGV[0]) on an owned table: log the flip.
-- (Versioned definitions before this file: 0025.)
CREATE OR REPLACE FUNCTION ferry.rules_public_changed()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_was boolean := coalesce((to_jsonb(OLD) ->> TG_ARGV[0])::boolean, false);
    v_is boolean := coalesce((to_jsonb(NEW) ->> TG_ARGV[0])::boolean, false);
    v_member record;
    v_owner name;
BEGIN
    -- Only the row's owner makes it public or private: a member writes the row as its
    -- owner does (its title, its deletion), but publishing a set shows it, and its
    -- tree, to every signed-in user, which is the owner's to decide. The app's own SQL
    -- (no user) may. 42501 with Row Level Security's words: Ferry answers not_allowed.
    IF v_is <> v_was AND ferry.current_user_id() IS NOT NULL THEN
        SELECT r.rule_column INTO v_owner FROM ferry.sync_rules r WHERE r.table_oid = TG_RELID AND r.kind = 'owned';
        -- The owner before the write: one who hands the row over in the same statement
        -- may flip the flag, one who takes it over may not.
        IF v_owner IS NOT NULL AND (to_jsonb(OLD) ->> v_owner) IS DISTINCT FROM ferry.current_user_id()::text THEN
            RAISE EXCEPTION USING ERRCODE = '42501',
                MESSAGE = format('new row violates row-level security policy for table %s: only its owner makes a row public or private',
                                 TG_RELID::regclass);
        END IF;
    END IF;
    IF v_is AND NOT v_was THEN
        INSERT INTO ferry.public_grants (scope_table, scope_id) VALUES (TG_RELID, NEW.id::text) ON CONFLICT DO NOTHING;
    ELSIF v_was AND NOT v_is THEN
        -- Not the rows of its members tables: they stay private to its members
        -- (ferry.rules_policies), so no reader got them by its being public.
        FOR v_member IN
            SELECT s.member_table, s.member_column FROM ferry.access_scopes s
             WHERE s.scope_table = TG_RELID
               AND NOT EXISTS (SELECT 1 FROM ferry.sync_rules m
                                WHERE m.table_oid = s.member_table AND m.kind = 'members' AND m.target_table = TG_RELID)
        LOOP
            EXECUTE format($f$
                INSERT INTO ferry.public_revocations (scope_table, scope_id, table_oid, row_id)
                SELECT %2$L::regclass, $1::text, %3$L::regclass, m.id::text FROM %1$s m WHERE m.%4$I = $1
                ON CONFLICT DO NOTHING
            $f$, v_member.member_table, TG_RELID::oid, v_member.member_table::oid, v_member.member_column)
            USING NEW.id;
        END LOOP;
    END IF;
    RETURN NULL;
END
$function$;
REVOKE ALL ON FUNCTION ferry.rules_public_changed() FROM PUBLIC;

-- public: rows of p_table (an owned table) whose boolean `flag` is true are
-- readable by every signed-in user, through GET, Index and a stream's pages.
-- (Versioned definitions before this file: 0025.)
CREATE OR REPLACE FUNCTION ferry.sync_public(p_table regclass, flag name)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_type text := ferry.rules_column_type(p_table, sync_public.flag, 'flag');
BEGIN
    IF NOT EXISTS (SELECT 1 FROM ferry.sync_rules r WHERE r.table_oid = p_table AND r.kind = 'owned') THEN
        RAISE EXCEPTION USING ERRCODE = '55000',
            MESSAGE = format('%s has no owned rule: only an owned table''s rows can be made public', p_table),
            HINT = format('SELECT ferry.sync_owned(%L, owner => ...) first.', p_table::text);
    END IF;
    IF v_type <> 'boolean' THEN
        RAISE EXCEPTION USING ERRCODE = '42804',
            MESSAGE = format('%s.%I (named as flag) must be boolean, not %s', p_table, sync_public.flag, v_type);
    END IF;
    UPDATE ferry.sync_rules SET public_column = sync_public.flag WHERE table_oid = p_table;
    EXECUTE format('DROP TRIGGER IF EXISTS zz_ferry_rules_public ON %s', p_table);
    EXECUTE format('CREATE TRIGGER zz_ferry_rules_public AFTER UPDATE OF %I ON %s FOR EACH ROW '
                   'EXECUTE FUNCTION ferry.rules_public_changed(%L)', sync_public.flag, p_table, sync_public.flag);
    PERFORM ferry.refresh_sync_rules();
END
$function$;
REVOKE ALL ON FUNCTION ferry.sync_public(regclass,name) FROM PUBLIC;

-- stream: a name for "a row of p_scope (an owned table) and everything hanging from it".
-- (Versioned definitions before this file: 0025.)
CREATE OR REPLACE FUNCTION ferry.sync_stream(p_name text, scope regclass)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    IF p_name IS NULL OR p_name !~ '^[a-z][a-z0-9_]{0,62}$' THEN
        RAISE EXCEPTION USING ERRCODE = '22023',
            MESSAGE = format('%L is not a stream name: lower-case letters, digits and _, starting with a letter', p_name);
    END IF;
    IF NOT EXISTS (SELECT 1 FROM ferry.sync_rules r WHERE r.table_oid = sync_stream.scope AND r.kind = 'owned') THEN
        RAISE EXCEPTION USING ERRCODE = '55000',
            MESSAGE = format('%s has no owned rule: a stream is a row of an owned table and what hangs from it', sync_stream.scope),
            HINT = format('SELECT ferry.sync_owned(%L, owner => ...) first.', sync_stream.scope::text);
    END IF;
    INSERT INTO ferry.sync_streams (name, scope_table) VALUES (p_name, sync_stream.scope)
    ON CONFLICT (name) DO UPDATE SET scope_table = excluded.scope_table;
END
$function$;
REVOKE ALL ON FUNCTION ferry.sync_stream(text,regclass) FROM PUBLIC;

-- The streams of p_schema's tables, for the serve role (which may not read ferry.sync_streams' neighbours).
-- (Versioned definitions before this file: 0025.)
CREATE OR REPLACE FUNCTION ferry.streams_of(p_schema name)
 RETURNS TABLE(name text, scope_name name)
 LANGUAGE sql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
    SELECT s.name, c.relname FROM ferry.sync_streams s
      JOIN pg_class c ON c.oid = s.scope_table JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = p_schema ORDER BY 1
$function$;
REVOKE ALL ON FUNCTION ferry.streams_of(name) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.streams_of(name) TO ferry_app;

-- The shared table a grant rule reaches the members of.
-- (Versioned definitions before this file: 0033.)
CREATE OR REPLACE FUNCTION ferry.rules_through(p_grant regclass)
 RETURNS regclass
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
RETURN (SELECT ferry.rules_reference(r.table_oid, r.member_column) AS rules_reference FROM ferry.sync_rules r WHERE (((r.table_oid)::oid = (rules_through.p_grant)::oid) AND (r.kind = 'grant'::text)));
REVOKE ALL ON FUNCTION ferry.rules_through(regclass) FROM PUBLIC;

-- p_table's id type, as SQL writes it.
-- (Versioned definitions before this file: 0033.)
CREATE OR REPLACE FUNCTION ferry.rules_id_type(p_table regclass)
 RETURNS text
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
RETURN (SELECT format_type(a.atttypid, a.atttypmod) AS format_type FROM pg_attribute a WHERE ((a.attrelid = (rules_id_type.p_table)::oid) AND (a.attname = 'id'::name) AND (NOT a.attisdropped)));
REVOKE ALL ON FUNCTION ferry.rules_id_type(regclass) FROM PUBLIC;

-- Whether a grant rule reads p_table (an owned table), or the owned table
-- p_table's child rules read through.
-- (Versioned definitions before this file: 0033.)
CREATE OR REPLACE FUNCTION ferry.rules_granted_table(p_table regclass)
 RETURNS boolean
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
    WITH RECURSIVE up (table_oid, kind, target_table, depth) AS (
        SELECT r.table_oid, r.kind, r.target_table, 0 FROM ferry.sync_rules r WHERE r.table_oid = p_table
        UNION ALL
        SELECT p.table_oid, p.kind, p.target_table, up.depth + 1
          FROM up JOIN ferry.sync_rules p ON p.table_oid = up.target_table
         WHERE up.kind = 'child' AND up.depth < 6)
    SELECT EXISTS (SELECT 1 FROM up JOIN ferry.sync_rules g ON g.kind = 'grant' AND g.target_table = up.table_oid
                    WHERE up.kind = 'owned')
$function$;
REVOKE ALL ON FUNCTION ferry.rules_granted_table(regclass) FROM PUBLIC;

-- 0033's test of a private row, read under the parent's read policy: no write
-- policy calls it since the private checks below (issue 47).
DROP FUNCTION IF EXISTS ferry.rules_private_test(regclass, text, integer);

-- The function that tells whether a row of p_table is private to the caller (its
-- owner's, or a scope's the caller is a live member of): what a child of a granted
-- table writes through (issue 47).
CREATE OR REPLACE FUNCTION ferry.rules_private_check(p_table regclass)
 RETURNS text
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
RETURN (SELECT format('%I.%I'::text, n.nspname, "left"(('_ferry_writes_'::text || (c.relname)::text), 63)) AS format FROM (pg_class c JOIN pg_namespace n ON ((n.oid = c.relnamespace))) WHERE (c.oid = (rules_private_check.p_table)::oid));
REVOKE ALL ON FUNCTION ferry.rules_private_check(regclass) FROM PUBLIC;

-- The test of a private row, for the body of a private check: every operator and
-- function named with its schema, no cast by a type name (the check runs as its
-- owner under the caller's search_path, without a SET clause to save and restore
-- on every call), and the scope ids called where they are needed.
CREATE OR REPLACE FUNCTION ferry.rules_private_check_test(p_table regclass, p_alias text, p_depth integer)
 RETURNS text
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_rule ferry.sync_rules;
    v_test text;
    v_member regclass;
    v_parent text := 'ferry_w' || (p_depth + 1);
BEGIN
    SELECT * INTO v_rule FROM ferry.sync_rules r WHERE r.table_oid = p_table;
    IF v_rule.kind = 'owned' THEN
        v_test := format('%s.%I OPERATOR(pg_catalog.=) ferry.current_user_id()', p_alias, v_rule.rule_column);
        FOR v_member IN
            SELECT m.table_oid FROM ferry.sync_rules m WHERE m.kind = 'members' AND m.target_table = p_table
             ORDER BY m.table_oid::oid
        LOOP
            v_test := v_test || format(' OR %s.id OPERATOR(pg_catalog.=) ANY (%s)', p_alias, ferry.rules_scope_ids_function(v_member));
        END LOOP;
        RETURN v_test;
    ELSIF v_rule.kind = 'child' AND p_depth < 6 THEN
        RETURN format('EXISTS (SELECT FROM %s %s WHERE %s.id OPERATOR(pg_catalog.=) %s.%I AND (%s))', v_rule.target_table, v_parent,
                      v_parent, p_alias, v_rule.rule_column, ferry.rules_private_check_test(v_rule.target_table, v_parent, p_depth + 1));
    END IF;
    RETURN 'true';
END
$function$;
REVOKE ALL ON FUNCTION ferry.rules_private_check_test(regclass,text,integer) FROM PUBLIC;

-- Creates or replaces p_table's private check (ferry.rules_private_check): whether
-- the row with id p_id has the caller as its owner, or a scope the caller is a
-- live member of (or, for a child, such a parent). A child's write policies call
-- it instead of reading the parent: PostgreSQL would read the parent under its
-- read policy, whose subqueries (each a subplan with init plans, set up by every
-- write, used or not) would only admit the same rows again (a private row is
-- readable). PL/pgSQL keeps the check's plan for the session. SECURITY DEFINER
-- (it reads as the table's owner) with no SET clause: its body names everything
-- with its schema (ferry.rules_private_check_test). It tells the serve role only
-- whether it may write a row, which its writes tell it anyway.
CREATE OR REPLACE FUNCTION ferry.rules_apply_private_check(p_table regclass)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_function text := ferry.rules_private_check(p_table);
    v_type text := ferry.rules_id_type(p_table);
    v_source text := format(E'\nBEGIN\n    RETURN EXISTS (SELECT FROM %s ferry_w0 WHERE ferry_w0.id OPERATOR(pg_catalog.=) p_id\n        AND (%s));\nEND\n',
                            p_table, ferry.rules_private_check_test(p_table, 'ferry_w0', 0));
    v_signature text := format('%s(%s)', v_function, v_type);
BEGIN
    IF to_regprocedure(v_signature) IS NOT NULL
       AND (SELECT p.prosrc FROM pg_proc p WHERE p.oid = to_regprocedure(v_signature)) IS NOT DISTINCT FROM v_source THEN
        RETURN;
    END IF;
    EXECUTE format('CREATE OR REPLACE FUNCTION %s(p_id %s) RETURNS boolean LANGUAGE plpgsql STABLE SECURITY DEFINER AS %L',
                   v_function, v_type, v_source);
    EXECUTE format('COMMENT ON FUNCTION %s IS %L', v_signature,
                   format('Generated by ferry.rules_apply_private_check for %s: whether the caller writes the row with this id. Do not edit.', p_table));
    EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', v_signature);
    EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO ferry_app', v_signature);
END
$function$;
REVOKE ALL ON FUNCTION ferry.rules_apply_private_check(regclass) FROM PUBLIC;

-- Records access granted (p_grant) or revoked of the scope row p_scope_id (of
-- p_scope) for every live member of the shared row p_through_id (of p_through).
-- (Versioned definitions before this file: 0033.)
CREATE OR REPLACE FUNCTION ferry.rules_grant_reach(p_through regclass, p_through_id text, p_scope regclass, p_scope_id text, p_grant boolean)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_members ferry.sync_rules;
    v_user uuid;
BEGIN
    FOR v_members IN
        SELECT * FROM ferry.sync_rules m WHERE m.kind = 'members' AND m.target_table = p_through ORDER BY m.table_oid::oid
    LOOP
        FOR v_user IN EXECUTE format('SELECT DISTINCT m.%I FROM %s m WHERE m.%I = CAST($1 AS %s) AND NOT m.is_deleted',
                                     v_members.member_column, v_members.table_oid, v_members.rule_column,
                                     ferry.rules_id_type(p_through))
                      USING p_through_id
        LOOP
            IF p_grant THEN
                PERFORM ferry.record_access_grant(v_user, p_scope, p_scope_id);
            ELSE
                PERFORM ferry.record_access_revocation(v_user, p_scope, p_scope_id, true);
            END IF;
        END LOOP;
    END LOOP;
END
$function$;
REVOKE ALL ON FUNCTION ferry.rules_grant_reach(regclass,text,regclass,text,boolean) FROM PUBLIC;

-- AFTER INSERT OR UPDATE on a grant table (TG_ARGV: the scope table's oid, the
-- scope column, the through column). A live row grants the scope row to the
-- through row's live members; a row that stops being live, or moves, revokes it.
-- (Versioned definitions before this file: 0033.)
CREATE OR REPLACE FUNCTION ferry.rules_grant_changed()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_scope regclass := TG_ARGV[0]::oid::regclass;
    v_through regclass := ferry.rules_reference(TG_RELID, TG_ARGV[2]);
    v_new jsonb := to_jsonb(NEW);
    v_old jsonb := CASE WHEN TG_OP = 'UPDATE' THEN to_jsonb(OLD) END;
    v_moved boolean := TG_OP = 'UPDATE'
        AND (v_new -> TG_ARGV[1] IS DISTINCT FROM v_old -> TG_ARGV[1] OR v_new -> TG_ARGV[2] IS DISTINCT FROM v_old -> TG_ARGV[2]);
BEGIN
    IF TG_OP = 'UPDATE' AND NOT (v_old ->> 'is_deleted')::boolean AND ((v_new ->> 'is_deleted')::boolean OR v_moved) THEN
        PERFORM ferry.rules_grant_reach(v_through, v_old ->> TG_ARGV[2], v_scope, v_old ->> TG_ARGV[1], false);
    END IF;
    IF NOT (v_new ->> 'is_deleted')::boolean
       AND (TG_OP = 'INSERT' OR (v_old ->> 'is_deleted')::boolean OR v_moved) THEN
        PERFORM ferry.rules_grant_reach(v_through, v_new ->> TG_ARGV[2], v_scope, v_new ->> TG_ARGV[1], true);
    END IF;
    RETURN NULL;
END
$function$;
REVOKE ALL ON FUNCTION ferry.rules_grant_changed() FROM PUBLIC;

-- AFTER INSERT OR UPDATE on a members table whose shared table grant rules
-- reach through (TG_ARGV: the shared table's oid, the scope column, the member
-- column). A member added is granted every scope row the shared row's live
-- grant rows point at; a member removed (or moved) has them revoked.
-- (Versioned definitions before this file: 0033.)
CREATE OR REPLACE FUNCTION ferry.rules_grant_membership_changed()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_through regclass := TG_ARGV[0]::oid::regclass;
    v_new jsonb := to_jsonb(NEW);
    v_old jsonb := CASE WHEN TG_OP = 'UPDATE' THEN to_jsonb(OLD) END;
    v_moved boolean := TG_OP = 'UPDATE'
        AND (v_new -> TG_ARGV[1] IS DISTINCT FROM v_old -> TG_ARGV[1] OR v_new -> TG_ARGV[2] IS DISTINCT FROM v_old -> TG_ARGV[2]);
    v_grant ferry.sync_rules;
    v_scope_id text;
BEGIN
    FOR v_grant IN
        SELECT * FROM ferry.sync_rules g WHERE g.kind = 'grant' AND ferry.rules_through(g.table_oid) = v_through
         ORDER BY g.table_oid::oid
    LOOP
        IF TG_OP = 'UPDATE' AND NOT (v_old ->> 'is_deleted')::boolean AND ((v_new ->> 'is_deleted')::boolean OR v_moved) THEN
            FOR v_scope_id IN EXECUTE format('SELECT DISTINCT g.%I::text FROM %s g WHERE g.%I = CAST($1 AS %s) AND NOT g.is_deleted',
                                             v_grant.rule_column, v_grant.table_oid, v_grant.member_column,
                                             ferry.rules_id_type(v_through))
                              USING v_old ->> TG_ARGV[1]
            LOOP
                PERFORM ferry.record_access_revocation((v_old ->> TG_ARGV[2])::uuid, v_grant.target_table, v_scope_id, true);
            END LOOP;
        END IF;
        IF NOT (v_new ->> 'is_deleted')::boolean
           AND (TG_OP = 'INSERT' OR (v_old ->> 'is_deleted')::boolean OR v_moved) THEN
            FOR v_scope_id IN EXECUTE format('SELECT DISTINCT g.%I::text FROM %s g WHERE g.%I = CAST($1 AS %s) AND NOT g.is_deleted',
                                             v_grant.rule_column, v_grant.table_oid, v_grant.member_column,
                                             ferry.rules_id_type(v_through))
                              USING v_new ->> TG_ARGV[1]
            LOOP
                PERFORM ferry.record_access_grant((v_new ->> TG_ARGV[2])::uuid, v_grant.target_table, v_scope_id);
            END LOOP;
        END IF;
    END LOOP;
    RETURN NULL;
END
$function$;
REVOKE ALL ON FUNCTION ferry.rules_grant_membership_changed() FROM PUBLIC;

-- What a grant rule generates beside what ferry.rules_apply does for every
-- rule: its scope-ids function, its trigger, the trigger on each members table
-- of its through table, and the triggers that delete its rows with either row.
-- Changes nothing when all is current.
-- (Versioned definitions before this file: 0033.)
CREATE OR REPLACE FUNCTION ferry.rules_apply_grant(p_table regclass)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_rule ferry.sync_rules;
    v_through regclass := ferry.rules_through(p_table);
    v_function text := ferry.rules_scope_ids_function(p_table);
    v_memberships text;
    v_source text;
    v_members ferry.sync_rules;
    v_target regclass;
BEGIN
    SELECT * INTO v_rule FROM ferry.sync_rules r WHERE r.table_oid = p_table;
    SELECT string_agg(format('SELECT m.%I FROM %s m WHERE m.%I = ferry.current_user_id() AND NOT m.is_deleted',
                             m.rule_column, m.table_oid, m.member_column), ' UNION ALL ' ORDER BY m.table_oid::oid)
      INTO v_memberships
      FROM ferry.sync_rules m WHERE m.kind = 'members' AND m.target_table = v_through;
    -- PL/pgSQL for its plan kept for the session (see ferry.rules_apply's members function).
    v_source := format($f$
        BEGIN RETURN (SELECT coalesce(array_agg(DISTINCT g.%1$I), '{}') FROM %2$s g
         WHERE NOT g.is_deleted AND g.%3$I IN (%4$s)); END
        $f$, v_rule.rule_column, p_table, v_rule.member_column,
        coalesce(v_memberships, format('SELECT NULL::%s WHERE false', ferry.rules_id_type(v_through))));
    IF to_regprocedure(v_function) IS NULL
       OR (SELECT p.prosrc FROM pg_proc p WHERE p.oid = to_regprocedure(v_function)) IS DISTINCT FROM v_source THEN
        EXECUTE format($f$
            CREATE OR REPLACE FUNCTION %s RETURNS %s[] LANGUAGE plpgsql STABLE SECURITY DEFINER
                SET search_path = pg_catalog, pg_temp AS %L
            $f$, v_function, ferry.rules_id_type(v_rule.target_table), v_source);
        EXECUTE format('COMMENT ON FUNCTION %s IS %L', v_function,
                       format('Generated by ferry.sync_grant for %s: the scope ids the caller reads through it. Do not edit.', p_table));
        EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', v_function);
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO ferry_app', v_function);
    END IF;

    IF NOT EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgrelid = p_table AND t.tgname = 'zz_ferry_rules_grant') THEN
        EXECUTE format('CREATE TRIGGER zz_ferry_rules_grant AFTER INSERT OR UPDATE ON %s FOR EACH ROW '
                       'EXECUTE FUNCTION ferry.rules_grant_changed(%L, %L, %L)',
                       p_table, v_rule.target_table::oid, v_rule.rule_column, v_rule.member_column);
    END IF;
    FOR v_members IN SELECT * FROM ferry.sync_rules m WHERE m.kind = 'members' AND m.target_table = v_through LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgrelid = v_members.table_oid AND t.tgname = 'zz_ferry_rules_grants') THEN
            EXECUTE format('CREATE TRIGGER zz_ferry_rules_grants AFTER INSERT OR UPDATE ON %s FOR EACH ROW '
                           'EXECUTE FUNCTION ferry.rules_grant_membership_changed(%L, %L, %L)',
                           v_members.table_oid, v_through::oid, v_members.rule_column, v_members.member_column);
        END IF;
    END LOOP;
    FOREACH v_target IN ARRAY ARRAY[v_rule.target_table, v_through] LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgrelid = v_target AND t.tgname = 'zz_ferry_rules_children') THEN
            EXECUTE format('CREATE TRIGGER zz_ferry_rules_children AFTER UPDATE ON %s FOR EACH ROW '
                           'WHEN (NEW.is_deleted AND NOT OLD.is_deleted) EXECUTE FUNCTION ferry.rules_delete_children()',
                           v_target);
        END IF;
    END LOOP;
END
$function$;
REVOKE ALL ON FUNCTION ferry.rules_apply_grant(regclass) FROM PUBLIC;

-- grant: a live row gives the live members of the shared row p_through points
-- at read access to the owned row p_scope points at.
-- (Versioned definitions before this file: 0033.)
CREATE OR REPLACE FUNCTION ferry.sync_grant(p_table regclass, scope name, through name, fixed name[] DEFAULT '{}'::name[], read_only name[] DEFAULT '{}'::name[])
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_scope regclass;
    v_through regclass;
BEGIN
    IF sync_grant.scope = sync_grant.through THEN
        RAISE EXCEPTION USING ERRCODE = '22023',
            MESSAGE = format('%s.%I is named as both scope and through: a grant reads one row through the members of another',
                             p_table, sync_grant.scope);
    END IF;
    PERFORM ferry.rules_column_type(p_table, sync_grant.scope, 'scope');
    v_scope := ferry.rules_reference(p_table, sync_grant.scope);
    IF v_scope IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = '42830',
            MESSAGE = format('%s.%I (named as scope) is not a foreign key: a grant rule needs a foreign key to the table it grants',
                             p_table, sync_grant.scope),
            HINT = format('ALTER TABLE %s ADD FOREIGN KEY (%I) REFERENCES <the granted table>;', p_table, sync_grant.scope);
    END IF;
    IF NOT EXISTS (SELECT 1 FROM ferry.sync_rules r WHERE r.table_oid = v_scope AND r.kind = 'owned') THEN
        RAISE EXCEPTION USING ERRCODE = '55000',
            MESSAGE = format('%s.%I (named as scope) points at %s, which has no owned rule: a grant shares an owned row (its owner grants it)',
                             p_table, sync_grant.scope, v_scope),
            HINT = format('SELECT ferry.sync_owned(%L, owner => ...) first.', v_scope::text);
    END IF;
    PERFORM ferry.rules_column_type(p_table, sync_grant.through, 'through');
    v_through := ferry.rules_reference(p_table, sync_grant.through);
    IF v_through IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = '42830',
            MESSAGE = format('%s.%I (named as through) is not a foreign key: a grant rule needs a foreign key to the table whose members it reaches',
                             p_table, sync_grant.through),
            HINT = format('ALTER TABLE %s ADD FOREIGN KEY (%I) REFERENCES <the shared table>;', p_table, sync_grant.through);
    END IF;
    IF v_through = v_scope OR v_through = p_table OR v_scope = p_table THEN
        RAISE EXCEPTION USING ERRCODE = '22023',
            MESSAGE = format('%s.%I and %s.%I (named as scope and through) must point at two other tables, not %s and %s',
                             p_table, sync_grant.scope, p_table, sync_grant.through, v_scope, v_through);
    END IF;
    IF NOT EXISTS (SELECT 1 FROM ferry.sync_rules r WHERE r.table_oid = v_through AND r.kind = 'owned') THEN
        RAISE EXCEPTION USING ERRCODE = '55000',
            MESSAGE = format('%s.%I (named as through) points at %s, which has no owned rule: a grant reaches the members of an owned table',
                             p_table, sync_grant.through, v_through),
            HINT = format('SELECT ferry.sync_owned(%L, owner => ...) and ferry.sync_members(<its members table>, scope => ...) first.',
                          v_through::text);
    END IF;
    IF NOT EXISTS (SELECT 1 FROM ferry.sync_rules r WHERE r.target_table = v_through AND r.kind = 'members') THEN
        RAISE EXCEPTION USING ERRCODE = '55000',
            MESSAGE = format('%s.%I (named as through) points at %s, which no members rule shares: a grant reaches that table''s members',
                             p_table, sync_grant.through, v_through),
            HINT = format('SELECT ferry.sync_members(<the table of %s''s members>, scope => ..., member => ...) first.', v_through::text);
    END IF;
    PERFORM ferry.rules_add(p_table, 'grant', sync_grant.scope, v_scope, sync_grant.through, '{}',
                            sync_grant.fixed, sync_grant.read_only);
END
$function$;
REVOKE ALL ON FUNCTION ferry.sync_grant(regclass,name,name,name[],name[]) FROM PUBLIC;
