-- 0018_console.sql: the operator's console (issue 38). Ferry's own: it
-- changes ferry.* only, and works for any app schema.
--
-- Applied by `ferry migrate` as the OWNER role, in one transaction, after 0015.
--
-- 1. Operators, apart from the app's users: ferry.operators (name, bcrypt
--    password, role `viewer` or `admin`), their console tokens
--    (ferry.operator_tokens, stored only as SHA-256 hashes like users'), and
--    ferry.operator_audit, which records every console action with who did it.
-- 2. ferry.refused_requests: each user's latest refused writes and feed polls
--    with their problem+json, bounded (see record_refusals for why a table).
-- 3. The last writer of every synced row: a hidden column _ferry_writer (the
--    user whose request last inserted or updated the row; NULL for a writer
--    that is no Ferry user, such as psql), set by the sync triggers.
-- 4. The functions the console calls. The serve role (ferry_app) reaches
--    none of these tables directly. Every function that reads past Row Level
--    Security takes the console token's hash and checks it first (FR401 when
--    it is no live operator token, FR403 when an admin is needed), so an app
--    user's token, or the serve role on its own, opens none of them. They only
--    read, except where the name says otherwise (sign-in, sign-out, the audit
--    entry, a token's revocation, the refusal log).

-- ---------------------------------------------------------------------------
-- Operators, their tokens, the audit log
-- ---------------------------------------------------------------------------

CREATE TABLE ferry.operators (
    id            uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    name          text        NOT NULL UNIQUE
                  CONSTRAINT operators_name_format CHECK (name ~ '^[A-Za-z0-9_][A-Za-z0-9_.@+-]{0,127}$'),
    password_hash text        NOT NULL,
    role          text        NOT NULL DEFAULT 'viewer' CONSTRAINT operators_role CHECK (role IN ('viewer', 'admin')),
    created_at    timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE ferry.operators IS
    'People who run Ferry, signed in to the console; not app users. A viewer reads, an admin may also revoke tokens and purge.';

CREATE TABLE ferry.operator_tokens (
    token_hash  bytea       PRIMARY KEY CONSTRAINT operator_tokens_hash_length CHECK (octet_length(token_hash) = 32),
    operator_id uuid        NOT NULL REFERENCES ferry.operators ON DELETE CASCADE,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    revoked     boolean     NOT NULL DEFAULT false
);
CREATE INDEX operator_tokens_operator_id_idx ON ferry.operator_tokens (operator_id);

-- Append-only for the serve role (it inserts through ferry.console_audit and
-- reads through ferry.console_audit_log); kept until the owner deletes it.
CREATE TABLE ferry.operator_audit (
    id            bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at            timestamptz NOT NULL DEFAULT clock_timestamp(),
    operator_id   uuid        REFERENCES ferry.operators ON DELETE SET NULL,
    operator_name text        NOT NULL,
    action        text        NOT NULL,
    target        jsonb       NOT NULL DEFAULT '{}',
    status        int,
    request_id    text
);
COMMENT ON TABLE ferry.operator_audit IS 'Every console action: who, when, what, on what, and the answer''s status.';

-- ---------------------------------------------------------------------------
-- Refused requests per user
-- ---------------------------------------------------------------------------

CREATE TABLE ferry.refused_requests (
    id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id    uuid        NOT NULL REFERENCES ferry.users ON DELETE CASCADE,
    at         timestamptz NOT NULL,
    method     text        NOT NULL,
    path       text        NOT NULL,
    status     int         NOT NULL,
    code       text,
    problem    jsonb,
    request_id text
);
CREATE INDEX refused_requests_user_id_idx ON ferry.refused_requests (user_id, id);
CREATE INDEX refused_requests_at_idx ON ferry.refused_requests (at);
COMMENT ON TABLE ferry.refused_requests IS
    'Each user''s latest refused writes and feed polls (at most 50 per user, at most 30 days old), for the console.';

-- Records refused requests, written in batches by each instance's background
-- recorder (Sources/Ferry/Console/RefusalRecorder.swift), never on a request's
-- own path. Entries: [{user_id?, token_hash?, at (ms), method, path, status,
-- code, problem, request_id}]; the user is the entry's user_id or the owner of
-- token_hash (the token's hash, for refusals whose token check never reported
-- the user back). Entries of unknown users are dropped.
--
-- A table rather than an in-process ring buffer: the operator looks hours
-- later, perhaps after a restart, and through whichever instance the balancer
-- picks, while the device's refusals were answered by any of them. The bound
-- keeps it small whatever a looping client does: the newest 50 per user, and
-- nothing older than 30 days (up to 1,000 old rows go per call).
CREATE FUNCTION ferry.record_refusals(p_entries jsonb) RETURNS int
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
DECLARE
    v_count int;
    v_users uuid[];
BEGIN
    WITH e AS (
        SELECT x.*, o.n FROM jsonb_array_elements(p_entries) WITH ORDINALITY AS o(entry, n)
         CROSS JOIN LATERAL jsonb_to_record(o.entry)
            AS x(user_id uuid, token_hash text, at bigint, method text, path text, status int, code text,
                 problem jsonb, request_id text)
    ), i AS (
        -- In the entries' order, so that ids follow the refusals' order.
        INSERT INTO ferry.refused_requests (user_id, at, method, path, status, code, problem, request_id)
        SELECT coalesce(e.user_id, t.user_id), to_timestamp(e.at / 1000.0), left(e.method, 16), left(e.path, 1024),
               e.status, left(coalesce(e.code, e.problem ->> 'code'), 64), e.problem, left(e.request_id, 64)
          FROM e LEFT JOIN ferry.tokens t ON e.user_id IS NULL AND t.token_hash = e.token_hash::bytea
         WHERE coalesce(e.user_id, t.user_id) IS NOT NULL
           AND EXISTS (SELECT 1 FROM ferry.users u WHERE u.id = coalesce(e.user_id, t.user_id))
         ORDER BY e.n
        RETURNING user_id
    )
    SELECT count(*), array_agg(DISTINCT i.user_id) INTO v_count, v_users FROM i;
    DELETE FROM ferry.refused_requests r
     WHERE r.user_id = ANY (v_users)
       AND r.id < (SELECT k.id FROM ferry.refused_requests k WHERE k.user_id = r.user_id
                    ORDER BY k.id DESC OFFSET 49 LIMIT 1);
    DELETE FROM ferry.refused_requests r
     WHERE r.id IN (SELECT o.id FROM ferry.refused_requests o WHERE o.at < now() - interval '30 days' LIMIT 1000);
    RETURN v_count;
END
$$;

-- ---------------------------------------------------------------------------
-- The last writer of each synced row
-- ---------------------------------------------------------------------------

-- Every synced table gets the column now (ferry.enable_sync_base, below, adds it to new ones).
DO $$
DECLARE
    v_table regclass;
BEGIN
    FOR v_table IN
        SELECT s.table_oid FROM ferry.synced_tables s
         WHERE EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = s.table_oid)
         ORDER BY s.table_oid::oid
    LOOP
        EXECUTE format('ALTER TABLE %s ADD COLUMN IF NOT EXISTS _ferry_writer uuid', v_table);
    END LOOP;
END
$$;

-- 0001's insert trigger, now also stamping the writer.
CREATE OR REPLACE FUNCTION ferry.sync_before_insert() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
BEGIN
    NEW.revision := 1;
    NEW.last_modified := ferry.now_ms();
    NEW._ferry_xid := pg_current_xact_id();
    NEW._ferry_writer := ferry.current_user_id();
    NEW._ferry_field_revisions := '{}'::jsonb;
    NEW.is_deleted := coalesce(NEW.is_deleted, false);
    RETURN NEW;
END
$$;

-- 0001's generic update trigger (what a table keeps when its generated one
-- cannot be made), now also stamping the writer.
CREATE OR REPLACE FUNCTION ferry.sync_before_update() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
BEGIN
    IF NEW.id IS DISTINCT FROM OLD.id THEN
        RAISE EXCEPTION USING ERRCODE = '42501',
            MESSAGE = format('the id of a synced row cannot change (%s)', TG_RELID::regclass);
    END IF;
    NEW.revision := OLD.revision + 1;
    NEW.last_modified := greatest(ferry.now_ms(), OLD.last_modified + 1);
    NEW._ferry_xid := pg_current_xact_id();
    NEW._ferry_writer := ferry.current_user_id();
    NEW._ferry_field_revisions := OLD._ferry_field_revisions
        || ferry.changed_fields(to_jsonb(NEW), to_jsonb(OLD), NEW.revision);
    RETURN NEW;
END
$$;

-- 0011's generator of each table's update trigger keeps its body under a new
-- name; ferry.sync_update_source now adds the writer's stamp beside the
-- transaction's to what it generates. ferry.refresh_sync_triggers() below
-- regenerates every table's function from it.
ALTER FUNCTION ferry.sync_update_source(pg_catalog.regclass) RENAME TO sync_update_source_0011;
CREATE FUNCTION ferry.sync_update_source(p_table pg_catalog.regclass) RETURNS pg_catalog.text
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, ferry, pg_temp
RETURN replace(ferry.sync_update_source_0011(p_table),
               E'    NEW._ferry_xid := pg_current_xact_id();\n',
               E'    NEW._ferry_xid := pg_current_xact_id();\n    NEW._ferry_writer := ferry.current_user_id();\n');
REVOKE EXECUTE ON FUNCTION ferry.sync_update_source_0011(pg_catalog.regclass), ferry.sync_update_source(pg_catalog.regclass)
  FROM PUBLIC;

-- Tables made syncable from now on get the column with the others: 0001's
-- enable_sync_base (which ferry.enable_sync calls, 0011) keeps its name and
-- adds it after the rest.
ALTER FUNCTION ferry.enable_sync_base(pg_catalog.regclass) RENAME TO enable_sync_columns;
COMMENT ON FUNCTION ferry.enable_sync_columns(pg_catalog.regclass) IS
    'ferry.enable_sync of 0001: columns, generic triggers, indexes, registration. ferry.enable_sync_base calls it.';
CREATE FUNCTION ferry.enable_sync_base(p_table pg_catalog.regclass) RETURNS void
    LANGUAGE plpgsql VOLATILE
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
BEGIN
    PERFORM ferry.enable_sync_columns(p_table);
    IF NOT EXISTS (SELECT 1 FROM pg_attribute a
                    WHERE a.attrelid = p_table AND a.attname = '_ferry_writer' AND NOT a.attisdropped) THEN
        EXECUTE format('ALTER TABLE %s ADD COLUMN _ferry_writer uuid', p_table);
    END IF;
END
$$;
REVOKE EXECUTE ON FUNCTION ferry.enable_sync_base(pg_catalog.regclass) FROM PUBLIC;

-- ---------------------------------------------------------------------------
-- Operator sign-in and the check every console function starts with
-- ---------------------------------------------------------------------------

-- Creates an operator (`ferry operator add`, as the owner). A taken name
-- raises 23505, a malformed one 23514, an empty password 22023.
CREATE FUNCTION ferry.create_operator(p_name text, p_password text, p_role text) RETURNS uuid
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, public, pg_temp
AS $$
DECLARE
    v_id uuid;
BEGIN
    IF p_password IS NULL OR p_password = '' THEN
        RAISE EXCEPTION USING ERRCODE = '22023', MESSAGE = 'password must not be empty';
    END IF;
    INSERT INTO ferry.operators (name, password_hash, role)
         VALUES (p_name, crypt(p_password, gen_salt('bf', 10)), p_role)
    RETURNING id INTO v_id;
    RETURN v_id;
END
$$;

-- Stores a console token for an operator (`ferry operator token`, as the owner).
CREATE FUNCTION ferry.issue_operator_token(p_operator uuid, p_token_hash bytea, p_ttl_seconds int) RETURNS timestamptz
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
DECLARE
    v_expires timestamptz;
BEGIN
    IF p_ttl_seconds IS NULL OR p_ttl_seconds <= 0 THEN
        RAISE EXCEPTION USING ERRCODE = '22023', MESSAGE = 'token ttl must be positive';
    END IF;
    DELETE FROM ferry.operator_tokens t WHERE t.operator_id = p_operator AND (t.revoked OR t.expires_at < now());
    INSERT INTO ferry.operator_tokens (token_hash, operator_id, expires_at)
         VALUES (p_token_hash, p_operator, now() + make_interval(secs => p_ttl_seconds))
    RETURNING expires_at INTO v_expires;
    RETURN v_expires;
END
$$;

-- Checks an operator's name and password and, when they hold, stores the
-- console token's hash, in one call: the serve role cannot mint a token
-- without the password. Throttled per name like users' sign-in (0001), in the
-- same table under `operator:<name>`, with the same answers:
--   (id, role, expires_at ms, 0)        signed in
--   (null, null, null, 0)               wrong name or password (same either way)
--   (null, null, null, ms)              locked: try again in ms; nothing checked
CREATE FUNCTION ferry.operator_sign_in(p_name text, p_password text, p_token_hash bytea, p_ttl_seconds int)
    RETURNS TABLE (operator_id uuid, role text, expires_at bigint, retry_after_ms bigint)
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, public, pg_temp
AS $$
DECLARE
    c_dummy_hash constant text := '$2a$10$IhNVJtQybKF.pvixakqnA.JkYM6k4/hsbDcjHGCE4Mx85HGhrdZKq';
    c_free_failures constant int := 4;
    c_max_lock_ms constant bigint := 300000;
    v_key text := 'operator:' || coalesce(p_name, '');
    v_locked_until timestamptz;
    v_operator ferry.operators;
    v_failures int;
BEGIN
    IF p_name IS NULL OR p_password IS NULL OR length(p_name) > 256 THEN
        PERFORM crypt(coalesce(p_password, ''), c_dummy_hash);
        RETURN QUERY SELECT NULL::uuid, NULL::text, NULL::bigint, 0::bigint;
        RETURN;
    END IF;
    SELECT f.locked_until INTO v_locked_until FROM ferry.login_failures f WHERE f.name = v_key;
    IF v_locked_until IS NOT NULL AND v_locked_until > clock_timestamp() THEN
        RETURN QUERY SELECT NULL::uuid, NULL::text, NULL::bigint,
            greatest(1, ceil(extract(epoch FROM v_locked_until - clock_timestamp()) * 1000))::bigint;
        RETURN;
    END IF;
    SELECT * INTO v_operator FROM ferry.operators o WHERE o.name = p_name;
    IF v_operator.id IS NOT NULL AND crypt(p_password, v_operator.password_hash) = v_operator.password_hash THEN
        DELETE FROM ferry.login_failures f WHERE f.name = v_key;
        RETURN QUERY SELECT v_operator.id, v_operator.role,
            floor(extract(epoch FROM ferry.issue_operator_token(v_operator.id, p_token_hash, p_ttl_seconds)) * 1000)::bigint,
            0::bigint;
        RETURN;
    END IF;
    IF v_operator.id IS NULL THEN
        PERFORM crypt(p_password, c_dummy_hash);
    END IF;
    INSERT INTO ferry.login_failures AS f (name, failures, last_failure)
         VALUES (v_key, 1, clock_timestamp())
    ON CONFLICT (name) DO UPDATE SET failures = f.failures + 1, last_failure = excluded.last_failure
    RETURNING f.failures INTO v_failures;
    IF v_failures > c_free_failures THEN
        UPDATE ferry.login_failures f
           SET locked_until = clock_timestamp() + make_interval(secs =>
                   least(c_max_lock_ms, 1000::bigint << least(v_failures - c_free_failures - 1, 20)) / 1000.0)
         WHERE f.name = v_key;
    END IF;
    RETURN QUERY SELECT NULL::uuid, NULL::text, NULL::bigint, 0::bigint;
END
$$;

-- The operator a console token belongs to, or FR401 for anything but a live
-- operator token (an app user's token included: it is not in this table).
-- With p_admin, a viewer gets FR403.
CREATE FUNCTION ferry.operator_session(p_token_hash bytea, p_admin boolean DEFAULT false)
    RETURNS TABLE (operator_id uuid, name text, role text, expires_at bigint)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
DECLARE
    v_role text;
BEGIN
    RETURN QUERY
        SELECT o.id, o.name, o.role, floor(extract(epoch FROM t.expires_at) * 1000)::bigint
          FROM ferry.operator_tokens t JOIN ferry.operators o ON o.id = t.operator_id
         WHERE t.token_hash = p_token_hash AND NOT t.revoked AND t.expires_at > now();
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'FR401', MESSAGE = 'invalid console token';
    END IF;
    IF p_admin THEN
        SELECT o.role INTO v_role FROM ferry.operator_tokens t JOIN ferry.operators o ON o.id = t.operator_id
         WHERE t.token_hash = p_token_hash;
        IF v_role <> 'admin' THEN
            RAISE EXCEPTION USING ERRCODE = 'FR403', MESSAGE = 'this needs an admin operator';
        END IF;
    END IF;
END
$$;

-- The operator's id, after the check (the first line of every console function).
CREATE FUNCTION ferry.console_operator(p_token_hash bytea, p_admin boolean DEFAULT false) RETURNS uuid
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
RETURN (SELECT s.operator_id FROM ferry.operator_session(p_token_hash, p_admin) s);

-- Ends the calling console token.
CREATE FUNCTION ferry.operator_sign_out(p_token_hash bytea) RETURNS void
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
BEGIN
    PERFORM ferry.console_operator(p_token_hash);
    UPDATE ferry.operator_tokens SET revoked = true WHERE token_hash = p_token_hash;
END
$$;

-- Appends one entry to the audit log, as the operator the token names.
CREATE FUNCTION ferry.console_audit(p_token_hash bytea, p_action text, p_target jsonb, p_status int, p_request_id text)
    RETURNS bigint
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
DECLARE
    v_id bigint;
BEGIN
    INSERT INTO ferry.operator_audit (operator_id, operator_name, action, target, status, request_id)
    SELECT s.operator_id, s.name, left(p_action, 64), coalesce(p_target, '{}'), p_status, left(p_request_id, 64)
      FROM ferry.operator_session(p_token_hash) s
    RETURNING id INTO v_id;
    RETURN v_id;
END
$$;

-- The audit log, newest first.
CREATE FUNCTION ferry.console_audit_log(p_token_hash bytea, p_limit int)
    RETURNS TABLE (id bigint, at bigint, operator_name text, action text, target jsonb, status int, request_id text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
BEGIN
    PERFORM ferry.console_operator(p_token_hash);
    RETURN QUERY
        SELECT a.id, floor(extract(epoch FROM a.at) * 1000)::bigint, a.operator_name, a.action, a.target, a.status,
               a.request_id
          FROM ferry.operator_audit a ORDER BY a.id DESC LIMIT greatest(1, least(p_limit, 1000));
END
$$;

-- ---------------------------------------------------------------------------
-- Users as the console sees them
-- ---------------------------------------------------------------------------

-- Users whose name starts with p_search (or whose id it is), with their live
-- token count; by name, at most p_limit.
CREATE FUNCTION ferry.console_users(p_token_hash bytea, p_search text, p_limit int)
    RETURNS TABLE (id uuid, name text, created_at bigint, live_tokens bigint)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
BEGIN
    PERFORM ferry.console_operator(p_token_hash);
    RETURN QUERY
        SELECT u.id, u.name, floor(extract(epoch FROM u.created_at) * 1000)::bigint,
               (SELECT count(*) FROM ferry.tokens t WHERE t.user_id = u.id AND NOT t.revoked AND t.expires_at > now())
          FROM ferry.users u
         WHERE coalesce(p_search, '') = ''
            OR u.name LIKE replace(replace(replace(p_search, '\', '\\'), '%', '\%'), '_', '\_') || '%'
            OR u.id::text = lower(p_search)
         ORDER BY u.name LIMIT greatest(1, least(p_limit, 500));
END
$$;

-- A user's tokens, newest first: an id (the first 8 bytes of the hash, in
-- hex: enough to name it, no use as a credential), when it was issued and
-- expires, whether it was revoked. At most 200.
CREATE FUNCTION ferry.console_user_tokens(p_token_hash bytea, p_user uuid)
    RETURNS TABLE (token_id text, created_at bigint, expires_at bigint, revoked boolean)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
BEGIN
    PERFORM ferry.console_operator(p_token_hash);
    RETURN QUERY
        SELECT encode(substring(t.token_hash FROM 1 FOR 8), 'hex'), floor(extract(epoch FROM t.created_at) * 1000)::bigint,
               floor(extract(epoch FROM t.expires_at) * 1000)::bigint, t.revoked
          FROM ferry.tokens t WHERE t.user_id = p_user
         ORDER BY t.created_at DESC, t.token_hash LIMIT 200;
END
$$;

-- Revokes one of a user's tokens (admins only). Returns the token's whole
-- hash as text, so the instance can drop it from its token cache, or NULL
-- when the user holds no unrevoked token with that id.
CREATE FUNCTION ferry.console_revoke_token(p_token_hash bytea, p_user uuid, p_token_id text) RETURNS text
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
DECLARE
    v_hash bytea;
BEGIN
    PERFORM ferry.console_operator(p_token_hash, true);
    UPDATE ferry.tokens t SET revoked = true
     WHERE t.user_id = p_user AND NOT t.revoked AND encode(substring(t.token_hash FROM 1 FOR 8), 'hex') = lower(p_token_id)
    RETURNING t.token_hash INTO v_hash;
    RETURN v_hash::text;
END
$$;

-- A user's latest refused requests, newest first.
CREATE FUNCTION ferry.console_refusals(p_token_hash bytea, p_user uuid, p_limit int)
    RETURNS TABLE (id bigint, at bigint, method text, path text, status int, code text, problem jsonb, request_id text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
BEGIN
    PERFORM ferry.console_operator(p_token_hash);
    RETURN QUERY
        SELECT r.id, floor(extract(epoch FROM r.at) * 1000)::bigint, r.method, r.path, r.status, r.code, r.problem,
               r.request_id
          FROM ferry.refused_requests r WHERE r.user_id = p_user
         ORDER BY r.id DESC LIMIT greatest(1, least(p_limit, 50));
END
$$;

-- Sets ferry.user_id to p_user for the rest of the transaction, as the token
-- check does for the user's own requests, after checking the operator:
-- "see as a user" then runs the user's own statements under the user's own
-- Row Level Security. Returns the user's name, or NULL for no such user.
CREATE FUNCTION ferry.console_act_as(p_token_hash bytea, p_user uuid) RETURNS text
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
DECLARE
    v_name text;
BEGIN
    PERFORM ferry.console_operator(p_token_hash);
    SELECT u.name INTO v_name FROM ferry.users u WHERE u.id = p_user;
    IF v_name IS NOT NULL THEN
        PERFORM set_config('ferry.user_id', p_user::text, true);
    END IF;
    RETURN v_name;
END
$$;

-- ---------------------------------------------------------------------------
-- Resources and rows past Row Level Security, for operators
-- ---------------------------------------------------------------------------

-- Per synced table: rows (exact below 100,000, else the planner's estimate),
-- tombstones (exact, through the tombstone index) and the oldest tombstone's
-- last_modified.
CREATE FUNCTION ferry.console_table_stats(p_token_hash bytea)
    RETURNS TABLE (schema_name name, table_name name, row_count bigint, estimated boolean, tombstones bigint,
                   oldest_tombstone bigint)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
DECLARE
    v record;
    v_estimate bigint;
BEGIN
    PERFORM ferry.console_operator(p_token_hash);
    FOR v IN SELECT s.table_oid, s.schema_name, s.table_name FROM ferry.sync_resources s ORDER BY 2, 3 LOOP
        SELECT greatest(c.reltuples, 0)::bigint INTO v_estimate FROM pg_class c WHERE c.oid = v.table_oid;
        schema_name := v.schema_name;
        table_name := v.table_name;
        estimated := v_estimate >= 100000;
        IF estimated THEN
            row_count := v_estimate;
        ELSE
            EXECUTE format('SELECT count(*) FROM %s', v.table_oid) INTO row_count;
        END IF;
        EXECUTE format('SELECT count(*), min(last_modified) FROM %s WHERE is_deleted', v.table_oid)
           INTO tombstones, oldest_tombstone;
        RETURN NEXT;
    END LOOP;
END
$$;

-- The SQL condition for the console's filters over a synced table aliased t:
-- p_filters maps column names to values (compared with =, the value cast to
-- the column's type; JSON null means IS NULL); p_deleted is 'any', 'live' or
-- 'deleted'. Columns come from the catalog, values stay in p_filters ($1).
-- Raises 42703 naming an unknown column.
CREATE FUNCTION ferry.console_condition(p_table regclass, p_filters jsonb, p_deleted text) RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
DECLARE
    v_parts text[] := ARRAY['true'];
    v_key text;
    v_type text;
BEGIN
    IF p_deleted = 'live' THEN
        v_parts := v_parts || 'NOT t.is_deleted'::text;
    ELSIF p_deleted = 'deleted' THEN
        v_parts := v_parts || 't.is_deleted'::text;
    ELSIF p_deleted IS DISTINCT FROM 'any' THEN
        RAISE EXCEPTION USING ERRCODE = '22023', MESSAGE = 'deleted is any, live or deleted';
    END IF;
    FOR v_key IN SELECT jsonb_object_keys(coalesce(p_filters, '{}')) ORDER BY 1 LOOP
        SELECT format_type(a.atttypid, a.atttypmod) INTO v_type FROM pg_attribute a
         WHERE a.attrelid = p_table AND a.attname = v_key AND a.attnum > 0 AND NOT a.attisdropped;
        IF v_type IS NULL THEN
            RAISE EXCEPTION USING ERRCODE = '42703', MESSAGE = format('no column %s', left(v_key, 64));
        END IF;
        IF jsonb_typeof(p_filters -> v_key) = 'null' THEN
            v_parts := v_parts || format('t.%I IS NULL', v_key);
        ELSE
            v_parts := v_parts || format('t.%I = CAST($1 ->> %L AS %s)', v_key, v_key, v_type);
        END IF;
    END LOOP;
    RETURN array_to_string(v_parts, ' AND ');
END
$$;

-- A row as the console shows it: every column (tombstones whole), and what
-- Ferry keeps of its history beside them.
CREATE FUNCTION ferry.console_row_json() RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path = pg_catalog, pg_temp
RETURN $f$jsonb_build_object(
    'row', to_jsonb(t) - ARRAY['_ferry_xid', '_ferry_field_revisions', '_ferry_writer'],
    'xid', t._ferry_xid::text, 'writer', t._ferry_writer, 'field_revisions', t._ferry_field_revisions)$f$;

-- One page of a synced table's rows, with the ordered ids of the whole result
-- for a paging snapshot (16 bytes each, as Index's, when the ids are uuids and
-- the result is longer than a page). p_order is a column, or NULL for id.
-- Columns: total, ids (null when not needed), data (a JSON array of rows).
CREATE FUNCTION ferry.console_rows(
    p_token_hash bytea, p_table regclass, p_filters jsonb, p_deleted text, p_order text, p_descending boolean, p_limit int)
    RETURNS TABLE (total bigint, ids bytea, data jsonb)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
DECLARE
    v_condition text;
    v_order text;
    v_uuid boolean;
BEGIN
    PERFORM ferry.console_operator(p_token_hash);
    IF NOT EXISTS (SELECT 1 FROM ferry.synced_tables s WHERE s.table_oid = p_table) THEN
        RAISE EXCEPTION USING ERRCODE = '42P01', MESSAGE = format('%s is not synced', p_table);
    END IF;
    v_condition := ferry.console_condition(p_table, p_filters, p_deleted);
    IF p_order IS NOT NULL AND NOT EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = p_table
                                            AND a.attname = p_order AND a.attnum > 0 AND NOT a.attisdropped) THEN
        RAISE EXCEPTION USING ERRCODE = '42703', MESSAGE = format('no column %s', left(p_order, 64));
    END IF;
    v_order := CASE WHEN p_order IS NULL OR p_order = 'id' THEN '' ELSE format('t.%I %s, ', p_order,
               CASE WHEN p_descending THEN 'DESC' ELSE 'ASC' END) END
               || 't.id ' || CASE WHEN p_descending THEN 'DESC' ELSE 'ASC' END;
    SELECT a.atttypid = 'uuid'::regtype INTO v_uuid FROM pg_attribute a WHERE a.attrelid = p_table AND a.attname = 'id';
    IF v_uuid THEN
        RETURN QUERY EXECUTE format($q$
            WITH s AS MATERIALIZED (
              SELECT string_agg(uuid_send(t.id), ''::bytea ORDER BY %3$s) AS ids, count(*) AS total
                FROM %1$s t WHERE %2$s
            )
            SELECT s.total, CASE WHEN s.total > $2 THEN s.ids END,
                   (SELECT coalesce(jsonb_agg(%4$s ORDER BY x.o), '[]')
                      FROM unnest(ARRAY(
                             SELECT encode(substring(s.ids FROM g * 16 + 1 FOR 16), 'hex')::uuid
                               FROM generate_series(0, least(s.total::int, $2) - 1) AS g ORDER BY g
                           )) WITH ORDINALITY AS x(id, o)
                      JOIN %1$s t ON t.id = x.id)
              FROM s
            $q$, p_table, v_condition, v_order, ferry.console_row_json()) USING p_filters, p_limit;
    ELSE
        RETURN QUERY EXECUTE format($q$
            SELECT (SELECT count(*) FROM %1$s t WHERE %2$s), NULL::bytea,
                   (SELECT coalesce(jsonb_agg(r.j ORDER BY r.o), '[]') FROM (
                      SELECT %4$s AS j, row_number() OVER (ORDER BY %3$s) AS o
                        FROM %1$s t WHERE %2$s ORDER BY %3$s LIMIT $2) r)
            $q$, p_table, v_condition, v_order, ferry.console_row_json()) USING p_filters, p_limit;
    END IF;
END
$$;

-- The rows of p_ids (a later page of a snapshot), in that order; purged ids are left out.
CREATE FUNCTION ferry.console_rows_by_id(p_token_hash bytea, p_table regclass, p_ids uuid[]) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
DECLARE
    v_data jsonb;
BEGIN
    PERFORM ferry.console_operator(p_token_hash);
    IF NOT EXISTS (SELECT 1 FROM ferry.synced_tables s WHERE s.table_oid = p_table) THEN
        RAISE EXCEPTION USING ERRCODE = '42P01', MESSAGE = format('%s is not synced', p_table);
    END IF;
    EXECUTE format($q$
        SELECT coalesce(jsonb_agg(%2$s ORDER BY x.o), '[]')
          FROM unnest($1) WITH ORDINALITY AS x(id, o) JOIN %1$s t ON t.id = x.id
        $q$, p_table, ferry.console_row_json()) INTO v_data USING p_ids;
    RETURN v_data;
END
$$;

-- One row and its history as far as Ferry keeps it: the row (tombstone or
-- not), its revision, the transaction of its last change and whether the
-- feed's frontier has passed it, the last writer (id and name), the revision
-- at which each field last changed, the access log entries naming it, and
-- the refused requests whose path names it. NULL when there is no such row.
CREATE FUNCTION ferry.console_row(p_token_hash bytea, p_table regclass, p_id text) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
DECLARE
    v_row jsonb;
    v_id_type text;
BEGIN
    PERFORM ferry.console_operator(p_token_hash);
    IF NOT EXISTS (SELECT 1 FROM ferry.synced_tables s WHERE s.table_oid = p_table) THEN
        RAISE EXCEPTION USING ERRCODE = '42P01', MESSAGE = format('%s is not synced', p_table);
    END IF;
    SELECT format_type(a.atttypid, a.atttypmod) INTO v_id_type FROM pg_attribute a
     WHERE a.attrelid = p_table AND a.attname = 'id' AND NOT a.attisdropped;
    EXECUTE format('SELECT %s || jsonb_build_object(''delivered'', t._ferry_xid < pg_snapshot_xmin(pg_current_snapshot())) '
                   'FROM %s t WHERE t.id = CAST($1 AS %s)', ferry.console_row_json(), p_table, v_id_type)
       INTO v_row USING p_id;
    IF v_row IS NULL THEN
        RETURN NULL;
    END IF;
    RETURN v_row || jsonb_build_object(
        'writer_name', (SELECT u.name FROM ferry.users u WHERE u.id = (v_row ->> 'writer')::uuid),
        'revocations', (SELECT coalesce(jsonb_agg(jsonb_build_object(
                'user_id', r.user_id, 'user_name', u.name, 'xid', r.xid::text,
                'at', floor(extract(epoch FROM r.created_at) * 1000)::bigint) ORDER BY r.xid DESC), '[]')
              FROM (SELECT * FROM ferry.access_revocations r WHERE r.table_oid = p_table AND r.row_id = p_id
                     ORDER BY r.xid DESC LIMIT 50) r
              LEFT JOIN ferry.users u ON u.id = r.user_id),
        'grants', (SELECT coalesce(jsonb_agg(jsonb_build_object(
                'user_id', g.user_id, 'user_name', u.name, 'xid', g.xid::text,
                'at', floor(extract(epoch FROM g.created_at) * 1000)::bigint) ORDER BY g.xid DESC), '[]')
              FROM (SELECT * FROM ferry.access_grants g WHERE g.scope_table = p_table AND g.scope_id = p_id
                     ORDER BY g.xid DESC LIMIT 50) g
              LEFT JOIN ferry.users u ON u.id = g.user_id),
        'refusals', (SELECT coalesce(jsonb_agg(jsonb_build_object(
                'user_id', r.user_id, 'user_name', u.name, 'at', floor(extract(epoch FROM r.at) * 1000)::bigint,
                'method', r.method, 'path', r.path, 'status', r.status, 'code', r.code) ORDER BY r.id DESC), '[]')
              FROM (SELECT * FROM ferry.refused_requests r WHERE strpos(r.path, '/' || p_id) > 0
                     ORDER BY r.id DESC LIMIT 20) r
              LEFT JOIN ferry.users u ON u.id = r.user_id));
END
$$;

-- ---------------------------------------------------------------------------
-- Health
-- ---------------------------------------------------------------------------

-- The oldest running transactions that hold an xid, oldest first, at most
-- five: the first is what holds the changes feed's frontier
-- (pg_snapshot_xmin) back, whichever database of the cluster it runs in,
-- since transaction ids are the cluster's. Found through pg_locks (every
-- transaction with an xid holds a lock on it, and pg_locks is open to every
-- role), described from pg_stat_activity, whose details PostgreSQL hides for
-- sessions of roles the owner may not see (grant it pg_read_all_stats to see
-- all). pid is NULL for a prepared transaction. The caller's own transaction
-- (the console's audit entry may have given it an xid) is left out.
CREATE FUNCTION ferry.console_oldest_transactions(p_token_hash bytea)
    RETURNS TABLE (xid text, pid int, backend_type text, application_name text, role_name name, state text,
                   age_ms bigint, query text, this_database boolean)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
BEGIN
    PERFORM ferry.console_operator(p_token_hash);
    RETURN QUERY
        SELECT l.transactionid::text, l.pid, a.backend_type, a.application_name, a.usename, a.state,
               floor(extract(epoch FROM clock_timestamp() - a.xact_start) * 1000)::bigint, left(a.query, 200),
               a.datname = current_database()
          FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
         WHERE l.locktype = 'transactionid' AND l.mode = 'ExclusiveLock' AND l.granted
           AND l.pid IS DISTINCT FROM pg_backend_pid()
         ORDER BY age(l.transactionid) DESC LIMIT 5;
END
$$;

-- ---------------------------------------------------------------------------
-- Privileges
-- ---------------------------------------------------------------------------

REVOKE EXECUTE ON FUNCTION
    ferry.record_refusals(jsonb),
    ferry.create_operator(text, text, text),
    ferry.issue_operator_token(uuid, bytea, int),
    ferry.operator_sign_in(text, text, bytea, int),
    ferry.operator_session(bytea, boolean),
    ferry.console_operator(bytea, boolean),
    ferry.operator_sign_out(bytea),
    ferry.console_audit(bytea, text, jsonb, int, text),
    ferry.console_audit_log(bytea, int),
    ferry.console_users(bytea, text, int),
    ferry.console_user_tokens(bytea, uuid),
    ferry.console_revoke_token(bytea, uuid, text),
    ferry.console_refusals(bytea, uuid, int),
    ferry.console_act_as(bytea, uuid),
    ferry.console_table_stats(bytea),
    ferry.console_condition(regclass, jsonb, text),
    ferry.console_row_json(),
    ferry.console_rows(bytea, regclass, jsonb, text, text, boolean, int),
    ferry.console_rows_by_id(bytea, regclass, uuid[]),
    ferry.console_row(bytea, regclass, text),
    ferry.console_oldest_transactions(bytea)
  FROM PUBLIC;
-- The serve role: sign-in, the checked entry points, and the refusal log.
-- Not create_operator or issue_operator_token (the owner's, through the CLI),
-- nor the helpers.
GRANT EXECUTE ON FUNCTION
    ferry.record_refusals(jsonb),
    ferry.operator_sign_in(text, text, bytea, int),
    ferry.operator_session(bytea, boolean),
    ferry.operator_sign_out(bytea),
    ferry.console_audit(bytea, text, jsonb, int, text),
    ferry.console_audit_log(bytea, int),
    ferry.console_users(bytea, text, int),
    ferry.console_user_tokens(bytea, uuid),
    ferry.console_revoke_token(bytea, uuid, text),
    ferry.console_refusals(bytea, uuid, int),
    ferry.console_act_as(bytea, uuid),
    ferry.console_table_stats(bytea),
    ferry.console_rows(bytea, regclass, jsonb, text, text, boolean, int),
    ferry.console_rows_by_id(bytea, regclass, uuid[]),
    ferry.console_row(bytea, regclass, text),
    ferry.console_oldest_transactions(bytea)
  TO ferry_app;

-- pgcrypto outside public (see 0001): the password functions look there.
DO $$
DECLARE
    v_schema name;
BEGIN
    SELECT e.extnamespace::regnamespace::name INTO v_schema FROM pg_extension e WHERE e.extname = 'pgcrypto';
    IF v_schema <> 'public' THEN
        EXECUTE format('ALTER FUNCTION ferry.create_operator(text, text, text) SET search_path = pg_catalog, ferry, %I, pg_temp', v_schema);
        EXECUTE format('ALTER FUNCTION ferry.operator_sign_in(text, text, bytea, int) SET search_path = pg_catalog, ferry, %I, pg_temp', v_schema);
    END IF;
END
$$;

SELECT ferry.refresh_sync_triggers();
