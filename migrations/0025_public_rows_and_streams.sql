-- 0025_public_rows_and_streams.sql: rows every signed-in user may read, and
-- the streams a device subscribes to (issue 46, items 1 and 2).
--
-- Applied by `ferry migrate` as the OWNER role, in one transaction.
--
--   SELECT ferry.sync_public('app.study_sets', flag => 'is_public');
--   SELECT ferry.sync_stream('study_set', scope => 'app.study_sets');
--
-- public   A row of an owned table whose boolean `flag` is true is readable
--          (never writable) by every signed-in user, and so are its children
--          (their rule reads through it). Readable only where the server turns
--          it on for the transaction (ferry.public_reads(): GET, Index, and a
--          stream's pages): the default changes feed, and every write, see a
--          public row only if the caller may read it anyway. So a public row
--          reaches no device that did not subscribe to it, and a write never
--          passes a policy through it (a term added to someone's public set is
--          refused as before). Member rows of a public table are never public:
--          who shares a set stays between its members.
-- stream   A name a device subscribes to with one row id of `scope` (an owned
--          table): that row and every row whose rule reads through it (its
--          children, their children, its member rows), as far as the caller
--          may read them. A stream never widens what Row Level Security lets a
--          user read; one the caller may not read answers as one whose id
--          does not exist (an empty page).
--
-- A row that stops being public (or becomes public) changes what subscribers
-- may read without changing the rows under it: the flip is logged, as a
-- membership change is (0004), in ferry.public_grants and
-- ferry.public_revocations, which a stream's pages read beside the caller's
-- own access logs. They are not per user: a revocation lists the scope's member
-- rows once for every subscriber.

ALTER TABLE ferry.sync_rules ADD COLUMN public_column name;
COMMENT ON COLUMN ferry.sync_rules.public_column IS
    'owned: the boolean column that makes a row readable by every signed-in user (ferry.sync_public), or NULL.';

-- Whether this transaction reads public rows: set by the server
-- (set_config('ferry.public_reads', 'on', true)) around a GET, an Index and a
-- stream's pages only.
CREATE FUNCTION ferry.public_reads() RETURNS boolean
    LANGUAGE sql STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
RETURN coalesce(current_setting('ferry.public_reads', true), '') = 'on';
GRANT EXECUTE ON FUNCTION ferry.public_reads() TO ferry_app;

CREATE TABLE ferry.public_grants (
    xid         xid8        NOT NULL DEFAULT pg_current_xact_id(),
    scope_table regclass    NOT NULL,
    scope_id    text        NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (scope_table, scope_id, xid)
);
COMMENT ON TABLE ferry.public_grants IS
    'A scope row became public in transaction xid; a stream of it serves the scope''s rows at that position.';

CREATE TABLE ferry.public_revocations (
    xid         xid8        NOT NULL DEFAULT pg_current_xact_id(),
    scope_table regclass    NOT NULL,
    scope_id    text        NOT NULL,
    table_oid   regclass    NOT NULL,
    row_id      text        NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (scope_table, scope_id, xid, table_oid, row_id)
);
COMMENT ON TABLE ferry.public_revocations IS
    'A scope row stopped being public in transaction xid; a stream of it serves a revoked stub for each listed row the caller cannot read otherwise.';
GRANT SELECT ON ferry.public_grants, ferry.public_revocations TO ferry_app;

-- A revocation now names its scope row, so that a subscription's pages serve
-- only the revocations of their stream (older entries name none).
ALTER TABLE ferry.access_revocations ADD COLUMN scope_table regclass, ADD COLUMN scope_id text;

CREATE OR REPLACE FUNCTION ferry.record_access_revocation(p_user uuid, p_scope regclass, p_scope_id text) RETURNS void
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
DECLARE
    v_member record;
    v_type text;
BEGIN
    SELECT format_type(a.atttypid, a.atttypmod) INTO v_type
      FROM pg_attribute a WHERE a.attrelid = p_scope AND a.attname = 'id' AND NOT a.attisdropped;
    EXECUTE format('SELECT 1 FROM %s WHERE id = CAST($1 AS %s) FOR UPDATE', p_scope, v_type) USING p_scope_id;
    FOR v_member IN
        SELECT s.member_table, s.member_column, format_type(a.atttypid, a.atttypmod) AS column_type
          FROM ferry.access_scopes s
          JOIN pg_attribute a ON a.attrelid = s.member_table AND a.attname = s.member_column AND NOT a.attisdropped
         WHERE s.scope_table = p_scope
    LOOP
        EXECUTE format($f$
            INSERT INTO ferry.access_revocations (user_id, table_oid, row_id, scope_table, scope_id)
            SELECT $1, %2$L::regclass, m.id::text, $3, $2 FROM %1$s m WHERE m.%3$I = CAST($2 AS %4$s)
            ON CONFLICT DO NOTHING
        $f$, v_member.member_table, v_member.member_table::oid, v_member.member_column, v_member.column_type)
        USING p_user, p_scope_id, p_scope;
    END LOOP;
END
$$;

-- AFTER UPDATE OF the public column (TG_ARGV[0]) on an owned table: log the flip.
CREATE FUNCTION ferry.rules_public_changed() RETURNS trigger
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
DECLARE
    v_was boolean := coalesce((to_jsonb(OLD) ->> TG_ARGV[0])::boolean, false);
    v_is boolean := coalesce((to_jsonb(NEW) ->> TG_ARGV[0])::boolean, false);
    v_member record;
BEGIN
    IF v_is AND NOT v_was THEN
        INSERT INTO ferry.public_grants (scope_table, scope_id) VALUES (TG_RELID, NEW.id::text) ON CONFLICT DO NOTHING;
    ELSIF v_was AND NOT v_is THEN
        FOR v_member IN
            SELECT s.member_table, s.member_column FROM ferry.access_scopes s WHERE s.scope_table = TG_RELID
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
$$;

-- The policies p_table's rule asks for (0019), with public rows: an owned
-- table's read policy also admits a public row where public reads are on, and
-- its write policy does not; a members table of a public table reads its scope
-- row through the scope's private test, so that members stay private.
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
        SELECT * INTO v_scope_rule FROM ferry.sync_rules o WHERE o.table_oid = v_rule.target_table;
        v_owner_of_scope := format('EXISTS (SELECT 1 FROM %s s WHERE s.id = %I.%I AND s.%I = ferry.current_user_id())',
                                   v_rule.target_table, v_name, v_rule.rule_column, v_scope_rule.rule_column);
        v_scope_read := ferry.rules_readable(p_table, v_rule.rule_column, v_rule.target_table);
        IF v_scope_rule.public_column IS NOT NULL THEN
            -- The scope's private test (its owner, or a live membership of the
            -- caller's), not its read policy, which admits public rows.
            v_scope_read := format('EXISTS (SELECT 1 FROM %s r WHERE r.id = %I.%I AND (r.%I = ferry.current_user_id() OR r.id = ANY ((SELECT %s)::%s[])))',
                                   v_rule.target_table, v_name, v_rule.rule_column, v_scope_rule.rule_column,
                                   ferry.rules_scope_ids_function(p_table),
                                   (SELECT format_type(a.atttypid, a.atttypmod) FROM pg_attribute a
                                     WHERE a.attrelid = v_rule.target_table AND a.attname = 'id'));
        END IF;
        RETURN jsonb_build_object(
            'ferry_rules_read', jsonb_build_object('cmd', 'SELECT', 'using',
                format('%I.%I = ferry.current_user_id() OR %s', v_name, v_rule.member_column, v_scope_read)),
            'ferry_rules_create', jsonb_build_object('cmd', 'INSERT', 'check', v_owner_of_scope),
            'ferry_rules_write', jsonb_build_object('cmd', 'UPDATE', 'using', v_owner_of_scope, 'check', v_owner_of_scope));
    END IF;

    v_write := v_read;
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

-- Every access-scope row the rules ask for (0019), and those of a public
-- table: it is a scope of its own (itself and its children), so that a flip of
-- its public column can list the rows it covers.
CREATE OR REPLACE FUNCTION ferry.rules_scopes()
    RETURNS TABLE (scope_table regclass, member_table regclass, member_column name, read_through_scope boolean)
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
    SELECT DISTINCT o.table_oid, o.table_oid, 'id'::name, false
      FROM ferry.sync_rules o
     WHERE o.kind = 'owned' AND (o.public_column IS NOT NULL
           OR EXISTS (SELECT 1 FROM ferry.sync_rules m WHERE m.kind = 'members' AND m.target_table = o.table_oid))
    UNION ALL
    SELECT m.target_table, m.table_oid, m.rule_column, false
      FROM ferry.sync_rules m WHERE m.kind = 'members'
    UNION ALL
    SELECT c.target_table, c.table_oid, c.rule_column, true
      FROM ferry.sync_rules c
     WHERE c.kind = 'child' AND EXISTS (
           SELECT 1 FROM ferry.sync_rules m
            WHERE (m.kind = 'members' AND m.target_table = c.target_table)
               OR (m.table_oid = c.target_table AND m.public_column IS NOT NULL));
$$;

-- public: rows of p_table (an owned table) whose boolean `flag` is true are
-- readable by every signed-in user, through GET, Index and a stream's pages.
CREATE FUNCTION ferry.sync_public(p_table regclass, flag name) RETURNS void
    LANGUAGE plpgsql VOLATILE
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
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
$$;

CREATE TABLE ferry.sync_streams (
    name        text        PRIMARY KEY CONSTRAINT sync_streams_name CHECK (name ~ '^[a-z][a-z0-9_]{0,62}$'),
    scope_table regclass    NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE ferry.sync_streams IS
    'Streams a device may subscribe to (ferry.sync_stream): a row of scope_table, by id, and every row whose rule reads through it.';

-- stream: a name for "a row of p_scope (an owned table) and everything hanging from it".
CREATE FUNCTION ferry.sync_stream(p_name text, scope regclass) RETURNS void
    LANGUAGE plpgsql VOLATILE
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
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
$$;

-- The streams of p_schema's tables, for the serve role (which may not read ferry.sync_streams' neighbours).
CREATE FUNCTION ferry.streams_of(p_schema name) RETURNS TABLE (name text, scope_name name)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
    SELECT s.name, c.relname FROM ferry.sync_streams s
      JOIN pg_class c ON c.oid = s.scope_table JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = p_schema ORDER BY 1
$$;

REVOKE EXECUTE ON FUNCTION
    ferry.rules_public_changed(), ferry.sync_public(regclass, name), ferry.sync_stream(text, regclass),
    ferry.streams_of(name)
  FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.streams_of(name) TO ferry_app;
