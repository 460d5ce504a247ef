-- functions/console.sql: The operator console: operators and their sessions, the audit, and the reads and actions the console offers.
--
-- A repeatable file (migrations/README.md): the current definition of each of its
-- functions, triggers and policies, applied by `ferry migrate` after the versioned
-- files whenever its checksum differs from the one recorded in
-- ferry.schema_repeatables. Change a function here, never in a new versioned file.
-- Every statement must be safe to run again on a database that already has it.
-- Each function keeps the comment of the versioned file that last defined it.

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
-- (Versioned definitions before this file: 0018.)
CREATE OR REPLACE FUNCTION ferry.record_refusals(p_entries jsonb)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
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
$function$;
REVOKE ALL ON FUNCTION ferry.record_refusals(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.record_refusals(jsonb) TO ferry_app;

-- Creates an operator (`ferry operator add`, as the owner). A taken name
-- raises 23505, a malformed one 23514, an empty password 22023.
-- (Versioned definitions before this file: 0018.)
CREATE OR REPLACE FUNCTION ferry.create_operator(p_name text, p_password text, p_role text)
 RETURNS uuid
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'public', 'pg_temp'
AS $function$
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
$function$;
REVOKE ALL ON FUNCTION ferry.create_operator(text,text,text) FROM PUBLIC;

-- Stores a console token for an operator (`ferry operator token`, as the owner).
-- (Versioned definitions before this file: 0018.)
CREATE OR REPLACE FUNCTION ferry.issue_operator_token(p_operator uuid, p_token_hash bytea, p_ttl_seconds integer)
 RETURNS timestamp with time zone
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
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
$function$;
REVOKE ALL ON FUNCTION ferry.issue_operator_token(uuid,bytea,integer) FROM PUBLIC;

-- Checks an operator's name and password and, when they hold, stores the
-- console token's hash, in one call: the serve role cannot mint a token
-- without the password. Throttled per name like users' sign-in (0001), in the
-- same table under `operator:<name>`, with the same answers:
--   (id, role, expires_at ms, 0)        signed in
--   (null, null, null, 0)               wrong name or password (same either way)
--   (null, null, null, ms)              locked: try again in ms; nothing checked
-- (Versioned definitions before this file: 0018.)
CREATE OR REPLACE FUNCTION ferry.operator_sign_in(p_name text, p_password text, p_token_hash bytea, p_ttl_seconds integer)
 RETURNS TABLE(operator_id uuid, role text, expires_at bigint, retry_after_ms bigint)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'public', 'pg_temp'
AS $function$
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
$function$;
REVOKE ALL ON FUNCTION ferry.operator_sign_in(text,text,bytea,integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.operator_sign_in(text,text,bytea,integer) TO ferry_app;

-- The operator a console token belongs to, or FR401 for anything but a live
-- operator token (an app user's token included: it is not in this table).
-- With p_admin, a viewer gets FR403.
-- (Versioned definitions before this file: 0018.)
CREATE OR REPLACE FUNCTION ferry.operator_session(p_token_hash bytea, p_admin boolean DEFAULT false)
 RETURNS TABLE(operator_id uuid, name text, role text, expires_at bigint)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
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
$function$;
REVOKE ALL ON FUNCTION ferry.operator_session(bytea,boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.operator_session(bytea,boolean) TO ferry_app;

-- The operator's id, after the check (the first line of every console function).
-- (Versioned definitions before this file: 0018.)
CREATE OR REPLACE FUNCTION ferry.console_operator(p_token_hash bytea, p_admin boolean DEFAULT false)
 RETURNS uuid
 LANGUAGE sql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
RETURN (SELECT s.operator_id FROM ferry.operator_session(console_operator.p_token_hash, console_operator.p_admin) s(operator_id, name, role, expires_at));
REVOKE ALL ON FUNCTION ferry.console_operator(bytea,boolean) FROM PUBLIC;

-- Ends the calling console token.
-- (Versioned definitions before this file: 0018.)
CREATE OR REPLACE FUNCTION ferry.operator_sign_out(p_token_hash bytea)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    PERFORM ferry.console_operator(p_token_hash);
    UPDATE ferry.operator_tokens SET revoked = true WHERE token_hash = p_token_hash;
END
$function$;
REVOKE ALL ON FUNCTION ferry.operator_sign_out(bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.operator_sign_out(bytea) TO ferry_app;

-- Appends one entry to the audit log, as the operator the token names.
-- (Versioned definitions before this file: 0018.)
CREATE OR REPLACE FUNCTION ferry.console_audit(p_token_hash bytea, p_action text, p_target jsonb, p_status integer, p_request_id text)
 RETURNS bigint
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_id bigint;
BEGIN
    INSERT INTO ferry.operator_audit (operator_id, operator_name, action, target, status, request_id)
    SELECT s.operator_id, s.name, left(p_action, 64), coalesce(p_target, '{}'), p_status, left(p_request_id, 64)
      FROM ferry.operator_session(p_token_hash) s
    RETURNING id INTO v_id;
    RETURN v_id;
END
$function$;
REVOKE ALL ON FUNCTION ferry.console_audit(bytea,text,jsonb,integer,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.console_audit(bytea,text,jsonb,integer,text) TO ferry_app;

-- The audit log, newest first.
-- (Versioned definitions before this file: 0018.)
CREATE OR REPLACE FUNCTION ferry.console_audit_log(p_token_hash bytea, p_limit integer)
 RETURNS TABLE(id bigint, at bigint, operator_name text, action text, target jsonb, status integer, request_id text)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    PERFORM ferry.console_operator(p_token_hash);
    RETURN QUERY
        SELECT a.id, floor(extract(epoch FROM a.at) * 1000)::bigint, a.operator_name, a.action, a.target, a.status,
               a.request_id
          FROM ferry.operator_audit a ORDER BY a.id DESC LIMIT greatest(1, least(p_limit, 1000));
END
$function$;
REVOKE ALL ON FUNCTION ferry.console_audit_log(bytea,integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.console_audit_log(bytea,integer) TO ferry_app;

-- 0027's users, JWT users included: found by any part of the lookup name or
-- the provider's subject as well, and named by them (a JWT user has no name),
-- so that an operator answering "I can't see my list" finds the user by the
-- email they wrote from.
-- (Versioned definitions before this file: 0018, 0027, 0029.)
CREATE OR REPLACE FUNCTION ferry.console_users(p_token_hash bytea, p_search text, p_limit integer)
 RETURNS TABLE(id uuid, name text, created_at bigint, live_tokens bigint, disabled boolean)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_pattern text := replace(replace(replace(coalesce(p_search, ''), '\', '\\'), '%', '\%'), '_', '\_');
BEGIN
    PERFORM ferry.console_operator(p_token_hash);
    RETURN QUERY
        SELECT u.id, coalesce(u.name, u.lookup_name, u.subject), floor(extract(epoch FROM u.created_at) * 1000)::bigint,
               (SELECT count(*) FROM ferry.tokens t WHERE t.user_id = u.id AND NOT t.revoked AND t.expires_at > now()),
               u.disabled_at IS NOT NULL
          FROM ferry.users u
         WHERE coalesce(p_search, '') = ''
            OR coalesce(u.name, u.lookup_name, u.subject) ILIKE '%' || v_pattern || '%'
            OR u.id::text = lower(p_search)
         ORDER BY NOT (coalesce(u.name, u.lookup_name, u.subject) LIKE v_pattern || '%'), coalesce(u.name, u.lookup_name, u.subject)
         LIMIT greatest(1, least(p_limit, 500));
END
$function$;
REVOKE ALL ON FUNCTION ferry.console_users(bytea,text,integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.console_users(bytea,text,integer) TO ferry_app;

-- A user's tokens, newest first: an id (the first 8 bytes of the hash, in
-- hex: enough to name it, no use as a credential), when it was issued and
-- expires, whether it was revoked. At most 200.
-- (Versioned definitions before this file: 0018, 0027; the comment is 0018's.)
CREATE OR REPLACE FUNCTION ferry.console_user_tokens(p_token_hash bytea, p_user uuid)
 RETURNS TABLE(token_id text, created_at bigint, expires_at bigint, revoked boolean, last_used_at bigint)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    PERFORM ferry.console_operator(p_token_hash);
    RETURN QUERY
        SELECT encode(substring(t.token_hash FROM 1 FOR 8), 'hex'), floor(extract(epoch FROM t.created_at) * 1000)::bigint,
               floor(extract(epoch FROM t.expires_at) * 1000)::bigint, t.revoked,
               floor(extract(epoch FROM t.last_used_at) * 1000)::bigint
          FROM ferry.tokens t WHERE t.user_id = p_user
         ORDER BY t.created_at DESC, t.token_hash LIMIT 200;
END
$function$;
REVOKE ALL ON FUNCTION ferry.console_user_tokens(bytea,uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.console_user_tokens(bytea,uuid) TO ferry_app;

-- Revokes one of a user's tokens (admins only). Returns the token's whole
-- hash as text, so the instance can drop it from its token cache, or NULL
-- when the user holds no unrevoked token with that id.
-- (Versioned definitions before this file: 0018.)
CREATE OR REPLACE FUNCTION ferry.console_revoke_token(p_token_hash bytea, p_user uuid, p_token_id text)
 RETURNS text
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_hash bytea;
BEGIN
    PERFORM ferry.console_operator(p_token_hash, true);
    UPDATE ferry.tokens t SET revoked = true
     WHERE t.user_id = p_user AND NOT t.revoked AND encode(substring(t.token_hash FROM 1 FOR 8), 'hex') = lower(p_token_id)
    RETURNING t.token_hash INTO v_hash;
    RETURN v_hash::text;
END
$function$;
REVOKE ALL ON FUNCTION ferry.console_revoke_token(bytea,uuid,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.console_revoke_token(bytea,uuid,text) TO ferry_app;

-- A user's latest refused requests, newest first.
-- (Versioned definitions before this file: 0018.)
CREATE OR REPLACE FUNCTION ferry.console_refusals(p_token_hash bytea, p_user uuid, p_limit integer)
 RETURNS TABLE(id bigint, at bigint, method text, path text, status integer, code text, problem jsonb, request_id text)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    PERFORM ferry.console_operator(p_token_hash);
    RETURN QUERY
        SELECT r.id, floor(extract(epoch FROM r.at) * 1000)::bigint, r.method, r.path, r.status, r.code, r.problem,
               r.request_id
          FROM ferry.refused_requests r WHERE r.user_id = p_user
         ORDER BY r.id DESC LIMIT greatest(1, least(p_limit, 50));
END
$function$;
REVOKE ALL ON FUNCTION ferry.console_refusals(bytea,uuid,integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.console_refusals(bytea,uuid,integer) TO ferry_app;

-- 0018's, for a JWT user too: they have no name, so the console's user page
-- answered 404 for them. The name shown is the user name, else the lookup
-- name, else the provider's subject (what the provider calls them).
-- (Versioned definitions before this file: 0018, 0029.)
CREATE OR REPLACE FUNCTION ferry.console_act_as(p_token_hash bytea, p_user uuid)
 RETURNS text
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_name text;
BEGIN
    PERFORM ferry.console_operator(p_token_hash);
    SELECT coalesce(u.name, u.lookup_name, u.subject) INTO v_name FROM ferry.users u WHERE u.id = p_user;
    IF v_name IS NOT NULL THEN
        PERFORM set_config('ferry.user_id', p_user::text, true);
    END IF;
    RETURN v_name;
END
$function$;
REVOKE ALL ON FUNCTION ferry.console_act_as(bytea,uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.console_act_as(bytea,uuid) TO ferry_app;

-- Per synced table: rows (exact below 100,000, else the planner's estimate),
-- tombstones (exact, through the tombstone index) and the oldest tombstone's
-- last_modified.
-- (Versioned definitions before this file: 0018.)
CREATE OR REPLACE FUNCTION ferry.console_table_stats(p_token_hash bytea)
 RETURNS TABLE(schema_name name, table_name name, row_count bigint, estimated boolean, tombstones bigint, oldest_tombstone bigint)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
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
$function$;
REVOKE ALL ON FUNCTION ferry.console_table_stats(bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.console_table_stats(bytea) TO ferry_app;

-- The SQL condition for the console's filters over a synced table aliased t:
-- p_filters maps column names to values (compared with =, the value cast to
-- the column's type; JSON null means IS NULL); p_deleted is 'any', 'live' or
-- 'deleted'. Columns come from the catalog, values stay in p_filters ($1).
-- Raises 42703 naming an unknown column.
-- (Versioned definitions before this file: 0018.)
CREATE OR REPLACE FUNCTION ferry.console_condition(p_table regclass, p_filters jsonb, p_deleted text)
 RETURNS text
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
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
        -- The value read as the column's values' type (a domain's base type: a value its CHECK
        -- refuses matches nothing instead of failing), never cut to a varchar's length nor
        -- rounded to a numeric's precision.
        SELECT format_type(b.base_type, CASE WHEN b.base_type IN ('varchar'::regtype, 'numeric'::regtype) THEN NULL
                                             ELSE b.base_typmod END) INTO v_type
          FROM pg_attribute a CROSS JOIN LATERAL ferry.base_type(a.atttypid, a.atttypmod) b
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
$function$;
REVOKE ALL ON FUNCTION ferry.console_condition(regclass,jsonb,text) FROM PUBLIC;

-- A row as the console shows it: every column (tombstones whole), and what
-- Ferry keeps of its history beside them.
-- (Versioned definitions before this file: 0018.)
CREATE OR REPLACE FUNCTION ferry.console_row_json()
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
RETURN 'jsonb_build_object(
    ''row'', to_jsonb(t) - ARRAY[''_ferry_xid'', ''_ferry_field_revisions'', ''_ferry_writer''],
    ''xid'', t._ferry_xid::text, ''writer'', t._ferry_writer, ''field_revisions'', t._ferry_field_revisions)'::text;
REVOKE ALL ON FUNCTION ferry.console_row_json() FROM PUBLIC;

-- One page of a synced table's rows, with the ordered ids of the whole result
-- for a paging snapshot (16 bytes each, as Index's, when the ids are uuids and
-- the result is longer than a page). p_order is a column, or NULL for id.
-- Columns: total, ids (null when not needed), data (a JSON array of rows).
-- (Versioned definitions before this file: 0018.)
CREATE OR REPLACE FUNCTION ferry.console_rows(p_token_hash bytea, p_table regclass, p_filters jsonb, p_deleted text, p_order text, p_descending boolean, p_limit integer)
 RETURNS TABLE(total bigint, ids bytea, data jsonb)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
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
$function$;
REVOKE ALL ON FUNCTION ferry.console_rows(bytea,regclass,jsonb,text,text,boolean,integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.console_rows(bytea,regclass,jsonb,text,text,boolean,integer) TO ferry_app;

-- The rows of p_ids (a later page of a snapshot), in that order; purged ids are left out.
-- (Versioned definitions before this file: 0018.)
CREATE OR REPLACE FUNCTION ferry.console_rows_by_id(p_token_hash bytea, p_table regclass, p_ids uuid[])
 RETURNS jsonb
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
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
$function$;
REVOKE ALL ON FUNCTION ferry.console_rows_by_id(bytea,regclass,uuid[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.console_rows_by_id(bytea,regclass,uuid[]) TO ferry_app;

-- One row and its history as far as Ferry keeps it: the row (tombstone or
-- not), its revision, the transaction of its last change and whether the
-- feed's frontier has passed it, the last writer (id and name), the revision
-- at which each field last changed, the access log entries naming it, and
-- the refused requests whose path names it. NULL when there is no such row.
-- (Versioned definitions before this file: 0018.)
CREATE OR REPLACE FUNCTION ferry.console_row(p_token_hash bytea, p_table regclass, p_id text)
 RETURNS jsonb
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
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
    -- Delivered: below the feed's frontier, computed in this snapshot as a
    -- poll's is (not pg_snapshot_xmin, the cluster's oldest running xid, which
    -- a transaction of another database or one that wrote no synced row holds
    -- back while devices already have the row). The row is final there: a poll
    -- now serves it to a device whose cursor is before it (docs/changes-feed.md,
    -- "A frontier that falls back").
    EXECUTE format('SELECT %s || jsonb_build_object(''delivered'', t._ferry_xid < $2) '
                   'FROM %s t WHERE t.id = CAST($1 AS %s)', ferry.console_row_json(), p_table, v_id_type)
       INTO v_row USING p_id, ferry.feed_frontier();
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
$function$;
REVOKE ALL ON FUNCTION ferry.console_row(bytea,regclass,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.console_row(bytea,regclass,text) TO ferry_app;

-- The oldest running transactions that hold an xid, oldest first, at most
-- five: the first is what holds the changes feed's frontier
-- (pg_snapshot_xmin) back, whichever database of the cluster it runs in,
-- since transaction ids are the cluster's. Found through pg_locks (every
-- transaction with an xid holds a lock on it, and pg_locks is open to every
-- role), described from pg_stat_activity, whose details PostgreSQL hides for
-- sessions of roles the owner may not see (grant it pg_read_all_stats to see
-- all). pid is NULL for a prepared transaction. The caller's own transaction
-- (the console's audit entry may have given it an xid) is left out.
-- (Versioned definitions before this file: 0018.)
CREATE OR REPLACE FUNCTION ferry.console_oldest_transactions(p_token_hash bytea)
 RETURNS TABLE(xid text, pid integer, backend_type text, application_name text, role_name name, state text, age_ms bigint, query text, this_database boolean)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
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
$function$;
REVOKE ALL ON FUNCTION ferry.console_oldest_transactions(bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.console_oldest_transactions(bytea) TO ferry_app;

-- Disables (p_disabled) or enables a user (admins only). Disabling revokes
-- every unrevoked token of theirs and tells every instance to drop its cached
-- checks of them. Returns the hashes of the tokens revoked (as text, for this
-- instance's cache), or NULL when there is no such user.
-- (Versioned definitions before this file: 0027.)
CREATE OR REPLACE FUNCTION ferry.console_set_user_disabled(p_token_hash bytea, p_user uuid, p_disabled boolean)
 RETURNS text[]
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    PERFORM ferry.console_operator(p_token_hash, true);
    UPDATE ferry.users u SET disabled_at = CASE WHEN p_disabled THEN coalesce(u.disabled_at, now()) END
     WHERE u.id = p_user;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    IF NOT p_disabled THEN
        RETURN '{}';
    END IF;
    RETURN ferry.revoke_all_tokens_of(p_user);
END
$function$;
REVOKE ALL ON FUNCTION ferry.console_set_user_disabled(bytea,uuid,boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.console_set_user_disabled(bytea,uuid,boolean) TO ferry_app;

-- Revokes every unrevoked token of a user (admins only) and tells every
-- instance to drop its cached checks of them. Returns the hashes revoked, or
-- NULL when there is no such user. A JWT is not Ferry's to revoke.
-- (Versioned definitions before this file: 0027.)
CREATE OR REPLACE FUNCTION ferry.console_revoke_user_tokens(p_token_hash bytea, p_user uuid)
 RETURNS text[]
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    PERFORM ferry.console_operator(p_token_hash, true);
    IF NOT EXISTS (SELECT 1 FROM ferry.users u WHERE u.id = p_user) THEN
        RETURN NULL;
    END IF;
    RETURN ferry.revoke_all_tokens_of(p_user);
END
$function$;
REVOKE ALL ON FUNCTION ferry.console_revoke_user_tokens(bytea,uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.console_revoke_user_tokens(bytea,uuid) TO ferry_app;

-- Whether a user is disabled, and since when (ms), for the console's user page.
-- (Versioned definitions before this file: 0027, 0029; the comment is 0027's.)
CREATE OR REPLACE FUNCTION ferry.console_user_state(p_token_hash bytea, p_user uuid)
 RETURNS TABLE(disabled_at bigint, last_used_at bigint, lookup_name text)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    PERFORM ferry.console_operator(p_token_hash);
    RETURN QUERY SELECT floor(extract(epoch FROM u.disabled_at) * 1000)::bigint,
                        floor(extract(epoch FROM u.last_used_at) * 1000)::bigint, u.lookup_name
                   FROM ferry.users u WHERE u.id = p_user;
END
$function$;
REVOKE ALL ON FUNCTION ferry.console_user_state(bytea,uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.console_user_state(bytea,uuid) TO ferry_app;

-- The audit log, newest first, only entries whose operator, action, target
-- (as JSON text) or request id contain p_search (case-insensitive); before
-- p_before (an entry id) when given, for paging back.
-- (Versioned definitions before this file: 0027.)
CREATE OR REPLACE FUNCTION ferry.console_audit_search(p_token_hash bytea, p_search text, p_before bigint, p_limit integer)
 RETURNS TABLE(id bigint, at bigint, operator_name text, action text, target jsonb, status integer, request_id text)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_pattern text := '%' || replace(replace(replace(coalesce(p_search, ''), '\', '\\'), '%', '\%'), '_', '\_') || '%';
BEGIN
    PERFORM ferry.console_operator(p_token_hash);
    RETURN QUERY
        SELECT a.id, floor(extract(epoch FROM a.at) * 1000)::bigint, a.operator_name, a.action, a.target, a.status,
               a.request_id
          FROM ferry.operator_audit a
         WHERE (p_before IS NULL OR a.id < p_before)
           AND (coalesce(p_search, '') = ''
                OR a.operator_name ILIKE v_pattern OR a.action ILIKE v_pattern
                OR a.target::text ILIKE v_pattern OR a.request_id ILIKE v_pattern)
         ORDER BY a.id DESC LIMIT greatest(1, least(p_limit, 1000));
END
$function$;
REVOKE ALL ON FUNCTION ferry.console_audit_search(bytea,text,bigint,integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.console_audit_search(bytea,text,bigint,integer) TO ferry_app;
