-- 0019_sync_rules.sql: declarative sync rules.
--
-- Applied by `ferry migrate` as the OWNER role, in one transaction.
--
-- Making a table syncable by hand takes ferry.enable_sync, Row Level Security
-- policies per command, column-level grants (a column left out is silently
-- read-only), SECURITY DEFINER helpers so that policies do not recurse,
-- indexes on foreign keys, a ferry.access_scopes row, and triggers that call
-- ferry.record_access_grant and ferry.record_access_revocation. A mistake in
-- any of them leaks rows or silently stalls a device. With these functions an
-- app migration says, in one call per table, who reads and writes it, and
-- Ferry generates all of that:
--
--   SELECT ferry.sync_owned('app.lists', owner => 'owner_id');
--   SELECT ferry.sync_members('app.list_members', scope => 'list_id', member => 'user_id');
--   SELECT ferry.sync_child('app.todos', parent => 'list_id');
--
-- owned    A row belongs to the user in its owner column (uuid, defaulting to
--          the caller, fixed at creation). The owner reads and writes it, and
--          creates rows only as themself. When a members rule shares the table,
--          its live members read and write the row too (but do not create rows
--          as someone else, nor manage the membership).
-- child    A row is readable and writable exactly when its parent row (through
--          its foreign key `parent`) is readable by the caller; the parent
--          column is fixed at creation. Deleting the parent deletes its children
--          (each a tombstone of its own, in the same transaction). A child of a
--          shared table is a member of its access scope: a new member receives
--          it through the changes feed, a removed one a `revoked` entry.
-- members  A live row gives the user in `member` access to the row of the
--          shared table its `scope` column points at (a table with an owned
--          rule). The scope row's owner adds and removes members; everyone on
--          the scope row reads its member rows, and a member keeps reading their
--          own row after removal (its tombstone is how their device learns).
--
-- Every rule also takes:
--   links      references (besides the owner or parent) that a live row may only
--              set to rows the writer can read; the row is deleted with them.
--   fixed      columns a client sets when it creates a row and never changes.
--   read_only  columns no client writes (a server default, a trigger's).
-- Every other column is writable on create and on update: a column added by a
-- later migration is granted by `ferry migrate` (ferry.refresh_sync_rules runs
-- after every file), not forgotten. `is_deleted` is always updatable, so
-- deletes work; `id` is writable on create.
--
-- What is generated, and kept current by ferry.refresh_sync_rules():
--   - ferry.enable_sync (sync columns, triggers, registration), then Row Level
--     Security with policies named ferry_rules_*;
--   - the grants to ferry_app: SELECT, and INSERT/UPDATE per column as above;
--   - an index on every foreign key that has none ((parent, rank, id) for a
--     ranked child, so ordered reads of one parent's rows walk an index);
--   - ferry.access_scopes rows, and for a members rule the trigger that records
--     access granted and revoked, and <schema>._ferry_scope_ids_<table>(): the
--     caller's scope ids in one array, SECURITY DEFINER so that the shared
--     table's policy does not recurse into the membership's;
--   - on a parent (and a link's target), the trigger that deletes children.
--
-- Bad input fails naming the table and column and changes nothing: a missing
-- column, a parent or scope that is not a foreign key, a scope without an
-- owned rule, a second rule for a table, a table that already has policies of
-- its own (the rules write every policy of a table), a table without a
-- primary key `id` (ferry.enable_sync). ferry.drop_sync_rules(table) removes
-- what a rule generated, so that it can be stated again differently.
--
-- Writing it all by hand stays possible: a table without a rule is left alone.

CREATE TABLE ferry.sync_rules (
    table_oid     regclass    PRIMARY KEY,
    kind          text        NOT NULL CONSTRAINT sync_rules_kind CHECK (kind IN ('owned', 'child', 'members')),
    -- owned: the owner's column; child: the parent reference; members: the scope reference.
    rule_column   name        NOT NULL,
    -- child: the parent table; members: the scope table (both through the foreign key).
    target_table  regclass,
    -- members: the column of the user given access.
    member_column name,
    links         name[]      NOT NULL DEFAULT '{}',
    fixed         name[]      NOT NULL DEFAULT '{}',
    read_only     name[]      NOT NULL DEFAULT '{}',
    -- The policies last generated, {name: {cmd, using, check}}: regenerated only when they differ.
    policies      jsonb       NOT NULL DEFAULT '{}',
    created_at    timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE ferry.sync_rules IS
    'One declarative sync rule per table (ferry.sync_owned, ferry.sync_child, ferry.sync_members); what it generates is kept current by ferry.refresh_sync_rules().';

-- The table a single-column foreign key of p_table on p_column points at, or NULL.
CREATE FUNCTION ferry.rules_reference(p_table regclass, p_column name) RETURNS regclass
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
RETURN (SELECT c.confrelid::regclass
          FROM pg_constraint c
          JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
         WHERE c.conrelid = p_table AND c.contype = 'f' AND cardinality(c.conkey) = 1 AND a.attname = p_column
         ORDER BY c.conname LIMIT 1);

-- p_column's type, or an error naming the table, the column and what named it.
CREATE FUNCTION ferry.rules_column_type(p_table regclass, p_column name, p_named_as text) RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
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
$$;

-- The reference a rule reads through: p_column must be a foreign key to a synced table.
CREATE FUNCTION ferry.rules_synced_reference(p_table regclass, p_column name, p_named_as text) RETURNS regclass
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
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
$$;

-- "The row p_table.p_column points at is readable by the caller", for a policy
-- of p_table: the target's own policies decide.
CREATE FUNCTION ferry.rules_readable(p_table regclass, p_column name, p_target regclass) RETURNS text
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
RETURN format('EXISTS (SELECT 1 FROM %s r WHERE r.id = %I.%I)', p_target,
              (SELECT c.relname FROM pg_class c WHERE c.oid = p_table), p_column);

-- The function a members rule generates: the caller's live scope ids, as one array.
CREATE FUNCTION ferry.rules_scope_ids_function(p_members regclass) RETURNS text
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
RETURN (SELECT format('%I.%I()', n.nspname, left('_ferry_scope_ids_' || c.relname, 63))
          FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = p_members);

-- The policies p_table's rule asks for: {name: {"cmd", "using", "check"}}.
CREATE FUNCTION ferry.rules_policies(p_table regclass) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
DECLARE
    v_rule ferry.sync_rules;
    v_name name;
    v_read text;
    v_create text;
    v_links text := '';
    v_member record;
    v_owner_of_scope text;
BEGIN
    SELECT * INTO v_rule FROM ferry.sync_rules r WHERE r.table_oid = p_table;
    SELECT c.relname INTO v_name FROM pg_class c WHERE c.oid = p_table;
    SELECT coalesce(string_agg(ferry.rules_readable(p_table, l, ferry.rules_reference(p_table, l)), ' AND '), '')
      INTO v_links FROM unnest(v_rule.links) l;

    IF v_rule.kind = 'owned' THEN
        v_create := format('%I.%I = ferry.current_user_id()', v_name, v_rule.rule_column);
        v_read := v_create;
        FOR v_member IN
            SELECT m.table_oid, format_type(a.atttypid, a.atttypmod) AS id_type
              FROM ferry.sync_rules m
              JOIN pg_attribute a ON a.attrelid = p_table AND a.attname = 'id'
             WHERE m.kind = 'members' AND m.target_table = p_table ORDER BY m.table_oid::oid
        LOOP
            v_read := v_read || format(' OR %I.id = ANY ((SELECT %s)::%s[])', v_name,
                                       ferry.rules_scope_ids_function(v_member.table_oid), v_member.id_type);
        END LOOP;
    ELSIF v_rule.kind = 'child' THEN
        v_read := ferry.rules_readable(p_table, v_rule.rule_column, v_rule.target_table);
        v_create := v_read;
    ELSE
        SELECT format('EXISTS (SELECT 1 FROM %s s WHERE s.id = %I.%I AND s.%I = ferry.current_user_id())',
                      v_rule.target_table, v_name, v_rule.rule_column, o.rule_column)
          INTO v_owner_of_scope
          FROM ferry.sync_rules o WHERE o.table_oid = v_rule.target_table;
        RETURN jsonb_build_object(
            'ferry_rules_read', jsonb_build_object('cmd', 'SELECT', 'using',
                format('%I.%I = ferry.current_user_id() OR %s', v_name, v_rule.member_column,
                       ferry.rules_readable(p_table, v_rule.rule_column, v_rule.target_table))),
            'ferry_rules_create', jsonb_build_object('cmd', 'INSERT', 'check', v_owner_of_scope),
            'ferry_rules_write', jsonb_build_object('cmd', 'UPDATE', 'using', v_owner_of_scope, 'check', v_owner_of_scope));
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
        'ferry_rules_write', jsonb_build_object('cmd', 'UPDATE', 'using', v_read, 'check',
            CASE WHEN v_links = '' THEN v_read ELSE format('(%s) AND (%I.is_deleted OR %s)', v_read, v_name, v_links) END));
END
$$;

-- The columns of p_table a client may write: {"insert": [...], "update": [...]}.
CREATE FUNCTION ferry.rules_writable(p_table regclass) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, ferry, pg_temp
RETURN (
    WITH r AS (SELECT * FROM ferry.sync_rules WHERE table_oid = p_table),
    cols AS (
        SELECT a.attname AS name, a.attnum
          FROM pg_attribute a, r
         WHERE a.attrelid = p_table AND a.attnum > 0 AND NOT a.attisdropped
           AND a.attname NOT IN ('revision', 'last_modified') AND left(a.attname, 7) <> '_ferry_'
           AND a.attgenerated = '' AND a.attname <> ALL (r.read_only)),
    fixed AS (
        SELECT unnest(r.fixed || r.links || ARRAY[r.rule_column, 'id']::name[]
                      || CASE WHEN r.member_column IS NULL THEN '{}'::name[] ELSE ARRAY[r.member_column] END) AS name
          FROM r)
    SELECT jsonb_build_object(
        'insert', coalesce((SELECT jsonb_agg(c.name ORDER BY c.attnum) FROM cols c WHERE c.name <> 'is_deleted'), '[]'),
        'update', coalesce((SELECT jsonb_agg(c.name ORDER BY c.attnum) FROM cols c
                             WHERE c.name NOT IN (SELECT name FROM fixed)), '[]'))
);

-- What ferry_app may write of p_table now, in the same shape.
CREATE FUNCTION ferry.rules_granted(p_table regclass) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, ferry, pg_temp
RETURN jsonb_build_object(
    'insert', coalesce((SELECT jsonb_agg(a.attname ORDER BY a.attnum) FROM pg_attribute a
                         WHERE a.attrelid = p_table AND a.attnum > 0 AND NOT a.attisdropped
                           AND has_column_privilege('ferry_app', p_table, a.attnum, 'INSERT')), '[]'),
    'update', coalesce((SELECT jsonb_agg(a.attname ORDER BY a.attnum) FROM pg_attribute a
                         WHERE a.attrelid = p_table AND a.attnum > 0 AND NOT a.attisdropped
                           AND has_column_privilege('ferry_app', p_table, a.attnum, 'UPDATE')), '[]'),
    'select', has_table_privilege('ferry_app', p_table, 'SELECT'),
    'delete', has_table_privilege('ferry_app', p_table, 'DELETE'));

-- Creates an index on every foreign key of p_table that no index leads with
-- ((parent, rank, id) for the parent of a ranked child). Takes no lock when
-- there is nothing to do.
CREATE FUNCTION ferry.rules_index_references(p_table regclass) RETURNS void
    LANGUAGE plpgsql VOLATILE
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
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
$$;

-- Brings everything p_table's rule generates up to date, changing only what
-- differs (a policy, trigger or grant replaced takes a lock on the table).
CREATE FUNCTION ferry.rules_apply(p_table regclass) RETURNS void
    LANGUAGE plpgsql VOLATILE
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
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
        v_source := format($f$
            SELECT coalesce(array_agg(m.%1$I), '{}') FROM %2$s m
             WHERE m.%3$I = ferry.current_user_id() AND NOT m.is_deleted
            $f$, v_rule.rule_column, p_table, v_rule.member_column);
        IF to_regprocedure(v_function) IS NULL
           OR (SELECT p.prosrc FROM pg_proc p WHERE p.oid = to_regprocedure(v_function)) IS DISTINCT FROM v_source THEN
            EXECUTE format($f$
                CREATE OR REPLACE FUNCTION %s RETURNS %s[] LANGUAGE sql STABLE SECURITY DEFINER
                    SET search_path = pg_catalog, pg_temp AS %L
                $f$, v_function, (SELECT format_type(a.atttypid, a.atttypmod) FROM pg_attribute a
                                   WHERE a.attrelid = v_rule.target_table AND a.attname = 'id'), v_source);
            EXECUTE format('COMMENT ON FUNCTION %s IS %L', v_function,
                           format('Generated by ferry.sync_members for %s: the caller''s live scope ids. Do not edit.', p_table));
            EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', v_function);
            EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO ferry_app', v_function);
        END IF;
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
$$;

-- Every access-scope row the rules ask for: a shared table is a member of its
-- own scope, its membership table and its children are members of it.
CREATE FUNCTION ferry.rules_scopes()
    RETURNS TABLE (scope_table regclass, member_table regclass, member_column name, read_through_scope boolean)
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
    SELECT DISTINCT m.target_table, m.target_table, 'id'::name, false
      FROM ferry.sync_rules m WHERE m.kind = 'members'
    UNION ALL
    SELECT m.target_table, m.table_oid, m.rule_column, false
      FROM ferry.sync_rules m WHERE m.kind = 'members'
    UNION ALL
    SELECT c.target_table, c.table_oid, c.rule_column, true
      FROM ferry.sync_rules c
     WHERE c.kind = 'child' AND EXISTS (SELECT 1 FROM ferry.sync_rules m WHERE m.kind = 'members' AND m.target_table = c.target_table);
$$;

-- AFTER INSERT OR UPDATE on a members table (TG_ARGV: the scope table's oid,
-- the scope column, the member column). A live row grants its member the scope
-- row; a row that stops being live, or whose member or scope changes, revokes.
CREATE FUNCTION ferry.rules_membership_changed() RETURNS trigger
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
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
$$;

-- AFTER UPDATE of a row to deleted: deletes the rows whose rule makes them its
-- children (or links to it), each a tombstone with its own revision, in this
-- transaction. SECURITY DEFINER: whoever may delete the parent deletes all of
-- it, including rows other users' policies would not let the deleter write.
CREATE FUNCTION ferry.rules_delete_children() RETURNS trigger
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
DECLARE
    v_child record;
BEGIN
    FOR v_child IN
        SELECT r.table_oid, r.rule_column AS reference FROM ferry.sync_rules r
         WHERE r.kind = 'child' AND r.target_table = TG_RELID
        UNION
        SELECT r.table_oid, l FROM ferry.sync_rules r, unnest(r.links) l
         WHERE ferry.rules_reference(r.table_oid, l) = TG_RELID
    LOOP
        EXECUTE format('UPDATE %s SET is_deleted = true WHERE %I = $1 AND NOT is_deleted', v_child.table_oid, v_child.reference)
          USING NEW.id;
    END LOOP;
    RETURN NULL;
END
$$;

-- Brings what every rule generates up to date; `ferry migrate` calls it after
-- each migration (a column added to a ruled table is granted, a new foreign
-- key indexed). Changes nothing, and locks nothing, when all is current.
-- Returns how many rules it looked at.
CREATE FUNCTION ferry.refresh_sync_rules() RETURNS int
    LANGUAGE plpgsql VOLATILE
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
DECLARE
    v_table regclass;
    v_count int := 0;
BEGIN
    -- Forget rules of dropped tables first.
    DELETE FROM ferry.sync_rules r WHERE NOT EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = r.table_oid);
    -- Owned (shared) tables first: members' functions exist before policies call them.
    FOR v_table IN
        SELECT r.table_oid FROM ferry.sync_rules r
         ORDER BY CASE r.kind WHEN 'members' THEN 0 WHEN 'owned' THEN 1 ELSE 2 END, r.table_oid::oid
    LOOP
        PERFORM ferry.rules_apply(v_table);
        v_count := v_count + 1;
    END LOOP;
    RETURN v_count;
END
$$;

-- Checks and records a rule, then generates what it asks for.
CREATE FUNCTION ferry.rules_add(
    p_table regclass, p_kind text, p_column name, p_target regclass, p_member name,
    p_links name[], p_fixed name[], p_read_only name[]
) RETURNS void
    LANGUAGE plpgsql VOLATILE
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
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
$$;

-- owned: rows belong to the user in p_owner (uuid; defaults to the caller).
CREATE FUNCTION ferry.sync_owned(
    p_table regclass, owner name DEFAULT 'owner_id', links name[] DEFAULT '{}', fixed name[] DEFAULT '{}',
    read_only name[] DEFAULT '{}'
) RETURNS void
    LANGUAGE plpgsql VOLATILE
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
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
$$;

-- child: rows readable and writable through the row p_parent points at.
CREATE FUNCTION ferry.sync_child(
    p_table regclass, parent name, links name[] DEFAULT '{}', fixed name[] DEFAULT '{}', read_only name[] DEFAULT '{}'
) RETURNS void
    LANGUAGE plpgsql VOLATILE
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
BEGIN
    PERFORM ferry.rules_add(p_table, 'child', sync_child.parent,
                            ferry.rules_synced_reference(p_table, sync_child.parent, 'parent'), NULL,
                            sync_child.links, sync_child.fixed, sync_child.read_only);
END
$$;

-- members: a live row gives p_member access to the owned row p_scope points at.
CREATE FUNCTION ferry.sync_members(
    p_table regclass, scope name, member name DEFAULT 'user_id', fixed name[] DEFAULT '{}', read_only name[] DEFAULT '{}'
) RETURNS void
    LANGUAGE plpgsql VOLATILE
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
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
$$;

-- Removes what p_table's rule generated (policies, grants, triggers, access
-- scopes, the scope-id function) and the rule; sync stays enabled. Tables
-- whose generated objects depended on it (a shared table's policies on its
-- members rule) are regenerated.
CREATE FUNCTION ferry.drop_sync_rules(p_table regclass) RETURNS void
    LANGUAGE plpgsql VOLATILE
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
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
    DELETE FROM ferry.sync_rules r WHERE r.table_oid = p_table RETURNING * INTO v_rule;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = '42704', MESSAGE = format('%s has no sync rule to drop', p_table);
    END IF;
    FOR v_policy IN SELECT p.polname FROM pg_policy p WHERE p.polrelid = p_table AND p.polname LIKE 'ferry\_rules\_%' LOOP
        EXECUTE format('DROP POLICY %I ON %s', v_policy, p_table);
    END LOOP;
    EXECUTE format('REVOKE ALL ON %s FROM ferry_app', p_table);
    EXECUTE format('DROP TRIGGER IF EXISTS zz_ferry_rules_members ON %s', p_table);
    IF v_rule.kind = 'members' THEN
        EXECUTE format('DROP FUNCTION IF EXISTS %s', ferry.rules_scope_ids_function(p_table));
    END IF;
    DELETE FROM ferry.access_scopes s WHERE s.member_table = p_table
        OR (s.scope_table = v_rule.target_table AND v_rule.kind = 'members'
            AND NOT EXISTS (SELECT 1 FROM ferry.rules_scopes() d WHERE d.scope_table = s.scope_table AND d.member_table = s.member_table));
    PERFORM ferry.refresh_sync_rules();
END
$$;

REVOKE EXECUTE ON FUNCTION
    ferry.rules_reference(regclass, name), ferry.rules_column_type(regclass, name, text),
    ferry.rules_synced_reference(regclass, name, text), ferry.rules_readable(regclass, name, regclass),
    ferry.rules_scope_ids_function(regclass), ferry.rules_policies(regclass), ferry.rules_writable(regclass),
    ferry.rules_granted(regclass), ferry.rules_index_references(regclass), ferry.rules_apply(regclass),
    ferry.rules_scopes(), ferry.rules_membership_changed(), ferry.rules_delete_children(), ferry.refresh_sync_rules(),
    ferry.rules_add(regclass, text, name, regclass, name, name[], name[], name[]),
    ferry.sync_owned(regclass, name, name[], name[], name[]), ferry.sync_child(regclass, name, name[], name[], name[]),
    ferry.sync_members(regclass, name, name, name[], name[]), ferry.drop_sync_rules(regclass)
  FROM PUBLIC;
GRANT SELECT ON ferry.sync_rules TO ferry_app;
