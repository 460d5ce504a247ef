-- 0033_sync_grant.sql: a rule that grants a scope through another scope's
-- members (issue 46, item 5: a class whose students follow their teacher's sets).
--
-- Applied by `ferry migrate` as the OWNER role, in one transaction.
--
--   SELECT ferry.sync_owned('app.classes', owner => 'teacher_id');
--   SELECT ferry.sync_members('app.class_members', scope => 'class_id', member => 'user_id');
--   SELECT ferry.sync_grant('app.class_sets', scope => 'set_id', through => 'class_id');
--
-- grant    A live row gives every live member of the row its `through` column
--          points at (a shared table: an owned rule and a members rule) read
--          access to the row its `scope` column points at (an owned table),
--          and to what reads through it (its children). Read only: the scope
--          row's write policy, and its children's, still admit only its owner
--          and its own members; and its members rows stay private to them (a
--          student does not read who collaborates on a set). Only a user who
--          owns both rows writes a grant row (a teacher links their own set to
--          their own class), and everyone who reads the `through` row reads
--          the grant rows that point at it (the class's students see which
--          sets their class follows). A grant row is deleted with either row.
--
-- What is generated beside what every rule gets (0019):
--   - <schema>._ferry_scope_ids_<table>(): the scope ids the caller reads
--     through live grant rows of their live memberships, SECURITY DEFINER as a
--     members rule's is; the scope table's read policy (and the changes feed's
--     read paths, ferry.read_paths) add `id = ANY (that)`;
--   - access granted and revoked: a grant row made live, or a member added to
--     the `through` row, records an access grant of the scope row for each user
--     it reaches; the reverse records a revocation (0004), so the feed sends
--     the scope's rows, and `revoked` entries, exactly as for a member added
--     and removed. A user who still reads a row another way (a collaborator,
--     another class) gets the row itself instead of a revoked entry: the feed
--     serves a revocation only for a row the caller cannot read (0004).
--
-- ferry.sync_rules stores a grant rule as kind 'grant', the scope column in
-- rule_column, the scope table in target_table, and the through column in
-- member_column (fixed at creation, as a members rule's member column is).

ALTER TABLE ferry.sync_rules DROP CONSTRAINT sync_rules_kind;
ALTER TABLE ferry.sync_rules ADD CONSTRAINT sync_rules_kind CHECK (kind IN ('owned', 'child', 'members', 'grant'));
COMMENT ON COLUMN ferry.sync_rules.member_column IS
    'members: the column of the user given access; grant: the column of the shared row whose members are given access.';

-- The shared table a grant rule reaches the members of.
CREATE FUNCTION ferry.rules_through(p_grant regclass) RETURNS regclass
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, ferry, pg_temp
RETURN (SELECT ferry.rules_reference(r.table_oid, r.member_column) FROM ferry.sync_rules r
         WHERE r.table_oid = p_grant AND r.kind = 'grant');

-- p_table's id type, as SQL writes it.
CREATE FUNCTION ferry.rules_id_type(p_table regclass) RETURNS text
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
RETURN (SELECT format_type(a.atttypid, a.atttypmod) FROM pg_attribute a
         WHERE a.attrelid = p_table AND a.attname = 'id' AND NOT a.attisdropped);

-- Whether a grant rule reads p_table (an owned table), or the owned table
-- p_table's child rules read through.
CREATE FUNCTION ferry.rules_granted_table(p_table regclass) RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
    WITH RECURSIVE up (table_oid, kind, target_table, depth) AS (
        SELECT r.table_oid, r.kind, r.target_table, 0 FROM ferry.sync_rules r WHERE r.table_oid = p_table
        UNION ALL
        SELECT p.table_oid, p.kind, p.target_table, up.depth + 1
          FROM up JOIN ferry.sync_rules p ON p.table_oid = up.target_table
         WHERE up.kind = 'child' AND up.depth < 6)
    SELECT EXISTS (SELECT 1 FROM up JOIN ferry.sync_rules g ON g.kind = 'grant' AND g.target_table = up.table_oid
                    WHERE up.kind = 'owned')
$$;

-- "The row aliased p_alias (of p_table) is readable by the caller other than
-- through a grant": its owner, its members, or (a child) such a parent. What a
-- child of a granted table writes through, so that reading is not writing.
CREATE FUNCTION ferry.rules_private_test(p_table regclass, p_alias text, p_depth int DEFAULT 0) RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
DECLARE
    v_rule ferry.sync_rules;
    v_test text;
    v_member regclass;
    v_parent text := 'ferry_w' || (p_depth + 1);
BEGIN
    SELECT * INTO v_rule FROM ferry.sync_rules r WHERE r.table_oid = p_table;
    IF v_rule.kind = 'owned' THEN
        v_test := format('%s.%I = ferry.current_user_id()', p_alias, v_rule.rule_column);
        FOR v_member IN
            SELECT m.table_oid FROM ferry.sync_rules m WHERE m.kind = 'members' AND m.target_table = p_table
             ORDER BY m.table_oid::oid
        LOOP
            v_test := v_test || format(' OR %s.id = ANY ((SELECT %s)::%s[])', p_alias,
                                       ferry.rules_scope_ids_function(v_member), ferry.rules_id_type(p_table));
        END LOOP;
        RETURN v_test;
    ELSIF v_rule.kind = 'child' AND p_depth < 6 THEN
        RETURN format('EXISTS (SELECT 1 FROM %s %s WHERE %s.id = %s.%I AND (%s))', v_rule.target_table, v_parent,
                      v_parent, p_alias, v_rule.rule_column, ferry.rules_private_test(v_rule.target_table, v_parent, p_depth + 1));
    END IF;
    -- Readable suffices (the row was read under its own policies).
    RETURN 'true';
END
$$;

-- The policies p_table's rule asks for (0019, 0025), with grants: an owned
-- table's read policy also admits the ids of each grant rule's function, and
-- its write policy does not; a child of a granted table writes only through a
-- parent readable other than by a grant; a members table of a granted table
-- reads its scope row through the scope's private test, so that members stay
-- private; a grant table is read by whoever reads its through row, and written
-- by whoever owns both rows.
CREATE OR REPLACE FUNCTION ferry.rules_policies(p_table regclass) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
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
BEGIN
    SELECT * INTO v_rule FROM ferry.sync_rules r WHERE r.table_oid = p_table;
    SELECT c.relname INTO v_name FROM pg_class c WHERE c.oid = p_table;
    SELECT coalesce(string_agg(ferry.rules_readable(p_table, l, ferry.rules_reference(p_table, l)), ' AND '), '')
      INTO v_links FROM unnest(v_rule.links) l;

    IF v_rule.kind = 'owned' THEN
        v_create := format('%I.%I = ferry.current_user_id()', v_name, v_rule.rule_column);
        v_read := v_create;
        FOR v_member IN
            SELECT m.table_oid FROM ferry.sync_rules m
             WHERE m.kind = 'members' AND m.target_table = p_table ORDER BY m.table_oid::oid
        LOOP
            v_read := v_read || format(' OR %I.id = ANY ((SELECT %s)::%s[])', v_name,
                                       ferry.rules_scope_ids_function(v_member.table_oid), ferry.rules_id_type(p_table));
        END LOOP;
    ELSIF v_rule.kind = 'child' THEN
        v_read := ferry.rules_readable(p_table, v_rule.rule_column, v_rule.target_table);
        v_create := v_read;
        IF ferry.rules_granted_table(v_rule.target_table) THEN
            v_create := format('EXISTS (SELECT 1 FROM %s ferry_w1 WHERE ferry_w1.id = %I.%I AND (%s))', v_rule.target_table,
                               v_name, v_rule.rule_column, ferry.rules_private_test(v_rule.target_table, 'ferry_w1', 1));
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
        RETURN jsonb_build_object(
            'ferry_rules_read', jsonb_build_object('cmd', 'SELECT', 'using',
                format('%I.%I = ferry.current_user_id() OR %s', v_name, v_rule.member_column, v_scope_read)),
            'ferry_rules_create', jsonb_build_object('cmd', 'INSERT', 'check', v_owner_of_scope),
            'ferry_rules_write', jsonb_build_object('cmd', 'UPDATE', 'using', v_owner_of_scope, 'check', v_owner_of_scope));
    END IF;

    v_write := CASE WHEN v_rule.kind = 'child' THEN v_create ELSE v_read END;
    IF v_rule.kind = 'owned' THEN
        FOR v_member IN
            SELECT g.table_oid FROM ferry.sync_rules g
             WHERE g.kind = 'grant' AND g.target_table = p_table ORDER BY g.table_oid::oid
        LOOP
            v_read := v_read || format(' OR %I.id = ANY ((SELECT %s)::%s[])', v_name,
                                       ferry.rules_scope_ids_function(v_member.table_oid), ferry.rules_id_type(p_table));
        END LOOP;
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
$$;

-- Every access-scope row the rules ask for (0019, 0025), and those of grants:
-- a granted table is a scope of its own (itself and its children), and a grant
-- table is a member of its through row's scope (read while that row is).
CREATE OR REPLACE FUNCTION ferry.rules_scopes()
    RETURNS TABLE (scope_table regclass, member_table regclass, member_column name, read_through_scope boolean)
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
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
$$;

-- Records access granted (p_grant) or revoked of the scope row p_scope_id (of
-- p_scope) for every live member of the shared row p_through_id (of p_through).
CREATE FUNCTION ferry.rules_grant_reach(p_through regclass, p_through_id text, p_scope regclass, p_scope_id text,
                                        p_grant boolean) RETURNS void
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
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
                PERFORM ferry.record_access_revocation(v_user, p_scope, p_scope_id);
            END IF;
        END LOOP;
    END LOOP;
END
$$;

-- AFTER INSERT OR UPDATE on a grant table (TG_ARGV: the scope table's oid, the
-- scope column, the through column). A live row grants the scope row to the
-- through row's live members; a row that stops being live, or moves, revokes it.
CREATE FUNCTION ferry.rules_grant_changed() RETURNS trigger
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
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
$$;

-- AFTER INSERT OR UPDATE on a members table whose shared table grant rules
-- reach through (TG_ARGV: the shared table's oid, the scope column, the member
-- column). A member added is granted every scope row the shared row's live
-- grant rows point at; a member removed (or moved) has them revoked.
CREATE FUNCTION ferry.rules_grant_membership_changed() RETURNS trigger
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
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
                PERFORM ferry.record_access_revocation((v_old ->> TG_ARGV[2])::uuid, v_grant.target_table, v_scope_id);
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
$$;

-- What a grant rule generates beside what ferry.rules_apply does for every
-- rule: its scope-ids function, its trigger, the trigger on each members table
-- of its through table, and the triggers that delete its rows with either row.
-- Changes nothing when all is current.
CREATE FUNCTION ferry.rules_apply_grant(p_table regclass) RETURNS void
    LANGUAGE plpgsql VOLATILE
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
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
    v_source := format($f$
        SELECT coalesce(array_agg(DISTINCT g.%1$I), '{}') FROM %2$s g
         WHERE NOT g.is_deleted AND g.%3$I IN (%4$s)
        $f$, v_rule.rule_column, p_table, v_rule.member_column,
        coalesce(v_memberships, format('SELECT NULL::%s WHERE false', ferry.rules_id_type(v_through))));
    IF to_regprocedure(v_function) IS NULL
       OR (SELECT p.prosrc FROM pg_proc p WHERE p.oid = to_regprocedure(v_function)) IS DISTINCT FROM v_source THEN
        EXECUTE format($f$
            CREATE OR REPLACE FUNCTION %s RETURNS %s[] LANGUAGE sql STABLE SECURITY DEFINER
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
$$;

-- AFTER UPDATE of a row to deleted (0019): also deletes the grant rows that
-- point at it, by either column.
CREATE OR REPLACE FUNCTION ferry.rules_delete_children() RETURNS trigger
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
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
$$;

-- 0019's, with grant rules: they are applied after the members rules whose
-- tables their functions read, and before the owned tables whose policies call them.
CREATE OR REPLACE FUNCTION ferry.refresh_sync_rules() RETURNS int
    LANGUAGE plpgsql VOLATILE
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
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
    RETURN v_count;
END
$$;

-- grant: a live row gives the live members of the shared row p_through points
-- at read access to the owned row p_scope points at.
CREATE FUNCTION ferry.sync_grant(
    p_table regclass, scope name, through name, fixed name[] DEFAULT '{}', read_only name[] DEFAULT '{}'
) RETURNS void
    LANGUAGE plpgsql VOLATILE
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
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
$$;

-- 0019's, with grant rules: a table a grant rule reads or reaches through is
-- not dropped from under it, and a grant rule's generated objects go with it.
CREATE OR REPLACE FUNCTION ferry.drop_sync_rules(p_table regclass) RETURNS void
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
$$;

-- The read paths (0021), with grant rules: their scope-ids function, and the
-- table whose readable rows they are read through (through_name).
DROP FUNCTION ferry.read_paths(name);
CREATE FUNCTION ferry.read_paths(p_schema name)
    RETURNS TABLE (table_name name, kind text, rule_column name, target_name name, member_column name,
                   scope_ids_function text, rules_only boolean, through_name name)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
    SELECT c.relname, r.kind, r.rule_column, t.relname, r.member_column,
           CASE WHEN r.kind IN ('members', 'grant') THEN ferry.rules_scope_ids_function(r.table_oid) END,
           c.relrowsecurity AND NOT EXISTS (
               SELECT 1 FROM pg_policy p
                WHERE p.polrelid = r.table_oid AND p.polpermissive AND p.polcmd IN ('r', '*')
                  AND p.polname NOT LIKE 'ferry\_rules\_%'),
           (SELECT h.relname FROM pg_class h WHERE h.oid = ferry.rules_through(r.table_oid) AND h.relnamespace = c.relnamespace)
      FROM ferry.sync_rules r
      JOIN pg_class c ON c.oid = r.table_oid
      JOIN pg_namespace n ON n.oid = c.relnamespace
      LEFT JOIN pg_class t ON t.oid = r.target_table
     WHERE n.nspname = p_schema
       AND (t.oid IS NULL OR t.relnamespace = c.relnamespace)
     ORDER BY 1
$$;

REVOKE EXECUTE ON FUNCTION
    ferry.rules_through(regclass), ferry.rules_id_type(regclass), ferry.rules_granted_table(regclass),
    ferry.rules_private_test(regclass, text, int), ferry.rules_grant_reach(regclass, text, regclass, text, boolean),
    ferry.rules_grant_changed(), ferry.rules_grant_membership_changed(), ferry.rules_apply_grant(regclass),
    ferry.sync_grant(regclass, name, name, name[], name[]), ferry.read_paths(name)
  FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.read_paths(name) TO ferry_app;
