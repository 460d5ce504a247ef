-- functions/auth.sql: Users, tokens and the request's identity: sign-in, token issue and revocation, the claims a request runs with, user lookup.
--
-- A repeatable file (migrations/README.md): the current definition of each of its
-- functions, triggers and policies, applied by `ferry migrate` after the versioned
-- files whenever its checksum differs from the one recorded in
-- ferry.schema_repeatables. Change a function here, never in a new versioned file.
-- Every statement must be safe to run again on a database that already has it.
-- Each function keeps the comment of the versioned file that last defined it.

-- The caller's user id, set per request by ferry.begin_request (transaction-local).
-- Plain, inlinable SQL so policies like `creator_id = ferry.current_user_id()` can use indexes.
-- (Versioned definitions before this file: 0001.)
CREATE OR REPLACE FUNCTION ferry.current_user_id()
 RETURNS uuid
 LANGUAGE sql
 STABLE PARALLEL SAFE
RETURN (NULLIF(current_setting('ferry.user_id'::text, true), ''::text))::uuid;
GRANT EXECUTE ON FUNCTION ferry.current_user_id() TO PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.current_user_id() TO ferry_app;

-- Checks a name and password, with throttling per name.
--   (id, 0)      correct credentials
--   (null, 0)    wrong credentials (the same whether or not the user exists)
--   (null, ms)   locked: try again in ms; the password was NOT checked
-- It returns rather than raises so that the failure counter update commits.
-- (Versioned definitions before this file: 0001.)
CREATE OR REPLACE FUNCTION ferry.authenticate(p_name text, p_password text)
 RETURNS TABLE(user_id uuid, retry_after_ms bigint)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'public', 'pg_temp'
AS $function$
DECLARE
    -- bcrypt (cost 10) of a password nobody uses: unknown names cost as much as known ones.
    c_dummy_hash constant text := '$2a$10$IhNVJtQybKF.pvixakqnA.JkYM6k4/hsbDcjHGCE4Mx85HGhrdZKq';
    c_free_failures constant int := 4;           -- the 5th consecutive failure locks
    c_max_lock_ms constant bigint := 300000;     -- 5 minutes
    v_locked_until timestamptz;
    v_id uuid;
    v_hash text;
    v_ok boolean;
    v_failures int;
BEGIN
    IF p_name IS NULL OR p_password IS NULL OR length(p_name) > 256 THEN
        -- Cannot be anyone's name; spend the same time and record nothing.
        PERFORM crypt(coalesce(p_password, ''), c_dummy_hash);
        RETURN QUERY SELECT NULL::uuid, 0::bigint;
        RETURN;
    END IF;

    SELECT f.locked_until INTO v_locked_until
      FROM ferry.login_failures f WHERE f.name = p_name;
    IF v_locked_until IS NOT NULL AND v_locked_until > clock_timestamp() THEN
        RETURN QUERY SELECT NULL::uuid,
            greatest(1, ceil(extract(epoch FROM v_locked_until - clock_timestamp()) * 1000))::bigint;
        RETURN;
    END IF;

    SELECT u.id, u.password_hash INTO v_id, v_hash FROM ferry.users u WHERE u.name = p_name;
    IF v_id IS NULL THEN
        PERFORM crypt(p_password, c_dummy_hash);
        v_ok := false;
    ELSE
        v_ok := crypt(p_password, v_hash) = v_hash;
    END IF;

    IF v_ok THEN
        DELETE FROM ferry.login_failures f WHERE f.name = p_name;
        RETURN QUERY SELECT v_id, 0::bigint;
        RETURN;
    END IF;

    INSERT INTO ferry.login_failures AS f (name, failures, last_failure)
         VALUES (p_name, 1, clock_timestamp())
    ON CONFLICT (name) DO UPDATE
         SET failures = f.failures + 1, last_failure = excluded.last_failure
    RETURNING f.failures INTO v_failures;
    IF v_failures > c_free_failures THEN
        -- 1 s at the 5th failure, doubling, capped.
        UPDATE ferry.login_failures f
           SET locked_until = clock_timestamp() + make_interval(secs =>
                   least(c_max_lock_ms, 1000::bigint << least(v_failures - c_free_failures - 1, 20)) / 1000.0)
         WHERE f.name = p_name;
    END IF;
    RETURN QUERY SELECT NULL::uuid, 0::bigint;
END
$function$;
REVOKE ALL ON FUNCTION ferry.authenticate(text,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.authenticate(text,text) TO ferry_app;

-- Creates a user with a bcrypt password hash. A taken name raises 23505
-- (unique_violation); a malformed name raises 23514 (check_violation).
-- (Versioned definitions before this file: 0001.)
CREATE OR REPLACE FUNCTION ferry.create_user(p_name text, p_password text)
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
    INSERT INTO ferry.users (name, password_hash)
         VALUES (p_name, crypt(p_password, gen_salt('bf', 10)))
    RETURNING id INTO v_id;
    RETURN v_id;
END
$function$;
REVOKE ALL ON FUNCTION ferry.create_user(text,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.create_user(text,text) TO ferry_app;

-- 0001's, refusing a disabled user. The user's row is locked FOR SHARE, so a
-- token issued while the user is being disabled is either refused or revoked
-- with the others.
-- (Versioned definitions before this file: 0001, 0027.)
CREATE OR REPLACE FUNCTION ferry.issue_token(p_user_id uuid, p_token_hash bytea, p_ttl_seconds integer)
 RETURNS timestamp with time zone
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_expires timestamptz;
    v_disabled timestamptz;
BEGIN
    IF p_ttl_seconds IS NULL OR p_ttl_seconds <= 0 THEN
        RAISE EXCEPTION USING ERRCODE = '22023', MESSAGE = 'token ttl must be positive';
    END IF;
    SELECT u.disabled_at INTO v_disabled FROM ferry.users u WHERE u.id = p_user_id FOR SHARE;
    IF v_disabled IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'FR403', MESSAGE = 'this user is disabled';
    END IF;
    INSERT INTO ferry.tokens (token_hash, user_id, expires_at)
         VALUES (p_token_hash, p_user_id, now() + make_interval(secs => p_ttl_seconds))
    RETURNING expires_at INTO v_expires;
    RETURN v_expires;
END
$function$;
REVOKE ALL ON FUNCTION ferry.issue_token(uuid,bytea,integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.issue_token(uuid,bytea,integer) TO ferry_app;

-- Revokes a token; true if it was live.
-- (Versioned definitions before this file: 0001.)
CREATE OR REPLACE FUNCTION ferry.revoke_token(p_token_hash bytea)
 RETURNS boolean
 LANGUAGE sql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
    WITH r AS (
        UPDATE ferry.tokens SET revoked = true
         WHERE token_hash = p_token_hash AND NOT revoked
        RETURNING 1
    )
    SELECT count(*) > 0 FROM r;
$function$;
REVOKE ALL ON FUNCTION ferry.revoke_token(bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.revoke_token(bytea) TO ferry_app;

-- Looks a user up by name (for the CLI). created_at is in ms since the epoch.
-- (Versioned definitions before this file: 0001.)
CREATE OR REPLACE FUNCTION ferry.user_by_name(p_name text)
 RETURNS TABLE(id uuid, name text, created_at bigint)
 LANGUAGE sql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
    SELECT u.id, u.name, floor(extract(epoch FROM u.created_at) * 1000)::bigint
      FROM ferry.users u WHERE u.name = p_name;
$function$;
REVOKE ALL ON FUNCTION ferry.user_by_name(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.user_by_name(text) TO ferry_app;

-- The current request's user (GET /v1/auth/me). created_at is in ms since the epoch.
-- (Versioned definitions before this file: 0001.)
CREATE OR REPLACE FUNCTION ferry.me()
 RETURNS TABLE(id uuid, name text, created_at bigint)
 LANGUAGE sql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
    SELECT u.id, u.name, floor(extract(epoch FROM u.created_at) * 1000)::bigint
      FROM ferry.users u WHERE u.id = ferry.current_user_id();
$function$;
REVOKE ALL ON FUNCTION ferry.me() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.me() TO ferry_app;

-- Raises the token check's 401. Called only when no live token matched.
-- (Versioned definitions before this file: 0009.)
CREATE OR REPLACE FUNCTION ferry.invalid_token()
 RETURNS text
 LANGUAGE plpgsql
AS $function$
BEGIN
    RAISE EXCEPTION USING ERRCODE = 'FR401', MESSAGE = 'invalid token';
END
$function$;
REVOKE ALL ON FUNCTION ferry.invalid_token() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.invalid_token() TO ferry_app;

-- The id of the user an (issuer, subject) pair names: a name-based UUID
-- (RFC 9562 §5.8, version 8) from SHA-256 of 'ferry-user', the issuer, a NUL
-- byte and the subject. A NUL cannot occur in PostgreSQL text, so no two pairs
-- share the hashed bytes.
-- (Versioned definitions before this file: 0016.)
CREATE OR REPLACE FUNCTION ferry.external_user_id(p_issuer text, p_subject text)
 RETURNS uuid
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE STRICT
RETURN (SELECT (encode(set_byte(set_byte(substr(digest.h, 1, 16), 6, ((get_byte(digest.h, 6) & 15) | 128)), 8, ((get_byte(digest.h, 8) & 63) | 128)), 'hex'::text))::uuid AS encode FROM (SELECT sha256((((convert_to('ferry-user'::text, 'UTF8'::name) || convert_to(external_user_id.p_issuer, 'UTF8'::name)) || '\x00'::bytea) || convert_to(external_user_id.p_subject, 'UTF8'::name))) AS h) digest);
GRANT EXECUTE ON FUNCTION ferry.external_user_id(text,text) TO PUBLIC;

-- 0016's, refusing a disabled user's JWT.
-- (Versioned definitions before this file: 0016, 0027, 0029.)
CREATE OR REPLACE FUNCTION ferry.sign_in_external(p_issuer text, p_subject text, p_claims text)
 RETURNS text
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_id uuid := ferry.external_user_id(p_issuer, p_subject);
    v_disabled timestamptz;
    v_found boolean;
BEGIN
    SELECT true, u.disabled_at INTO v_found, v_disabled FROM ferry.users u WHERE u.id = v_id;
    IF v_found IS NULL THEN
        -- A concurrent first request waits here for the other's row, then does nothing.
        INSERT INTO ferry.users (id, issuer, subject) VALUES (v_id, p_issuer, p_subject)
        ON CONFLICT DO NOTHING;
    ELSIF v_disabled IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'FR401', MESSAGE = 'invalid token';
    END IF;
    PERFORM set_config('ferry.user_id', v_id::text, true);
    PERFORM set_config('ferry.claims', p_claims, true);
    RETURN v_id::text;
END
$function$;
REVOKE ALL ON FUNCTION ferry.sign_in_external(text,text,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.sign_in_external(text,text,text) TO ferry_app;

-- 0027's, with the lookup name: kept (on first sight) or changed only when it
-- differs from the stored one. p_lookup_name is NULL when the token gives none.
-- (Versioned definitions before this file: 0016, 0027, 0029.)
CREATE OR REPLACE FUNCTION ferry.sign_in_external(p_issuer text, p_subject text, p_claims text, p_lookup_name text)
 RETURNS text
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_id uuid := ferry.external_user_id(p_issuer, p_subject);
    -- The shape GET /v1/users/lookup takes (ASCII, so lower() is the same in every collation); else none.
    v_lookup text := CASE WHEN p_lookup_name ~ '^[A-Za-z0-9_][A-Za-z0-9_.@+-]*$' AND octet_length(p_lookup_name) <= 320
                          THEN p_lookup_name END;
    v_disabled timestamptz;
    v_found boolean;
    v_stored text;
BEGIN
    SELECT true, u.disabled_at, u.lookup_name INTO v_found, v_disabled, v_stored FROM ferry.users u WHERE u.id = v_id;
    IF v_found IS NULL THEN
        -- A concurrent first request waits here for the other's row, then does nothing.
        INSERT INTO ferry.users (id, issuer, subject, lookup_name) VALUES (v_id, p_issuer, p_subject, v_lookup)
        ON CONFLICT DO NOTHING;
    ELSIF v_disabled IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'FR401', MESSAGE = 'invalid token';
    ELSIF v_stored IS DISTINCT FROM v_lookup THEN
        UPDATE ferry.users u SET lookup_name = v_lookup WHERE u.id = v_id;
    END IF;
    PERFORM set_config('ferry.user_id', v_id::text, true);
    PERFORM set_config('ferry.claims', p_claims, true);
    RETURN v_id::text;
END
$function$;
REVOKE ALL ON FUNCTION ferry.sign_in_external(text,text,text,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.sign_in_external(text,text,text,text) TO ferry_app;

-- The verified claims of the request's JWT, for policies: '{}' for Ferry's own
-- tokens and outside a request. Plain, inlinable SQL like ferry.current_user_id().
-- (Versioned definitions before this file: 0016.)
CREATE OR REPLACE FUNCTION ferry.claims()
 RETURNS jsonb
 LANGUAGE sql
 STABLE PARALLEL SAFE
RETURN COALESCE((NULLIF(current_setting('ferry.claims'::text, true), ''::text))::jsonb, '{}'::jsonb);
GRANT EXECUTE ON FUNCTION ferry.claims() TO PUBLIC;

-- One claim as text (a string's value, other JSON as its text), null when absent:
-- `org_id = ferry.claim('org_id')::uuid`.
-- (Versioned definitions before this file: 0016.)
CREATE OR REPLACE FUNCTION ferry.claim(p_name text)
 RETURNS text
 LANGUAGE sql
 STABLE PARALLEL SAFE
RETURN (ferry.claims() ->> p_name);
GRANT EXECUTE ON FUNCTION ferry.claim(text) TO PUBLIC;

-- Whether a user may be found by lookup. Every user for now; 0027 leaves out disabled users.
-- (Versioned definitions before this file: 0026, 0027; the comment is 0026's.)
CREATE OR REPLACE FUNCTION ferry.user_findable(p_user ferry.users)
 RETURNS boolean
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
RETURN ((p_user).disabled_at IS NULL);
REVOKE ALL ON FUNCTION ferry.user_findable(ferry.users) FROM PUBLIC;

-- 0026's, also matching lookup names, and answering as for nobody when more
-- than one findable user matches.
-- (Versioned definitions before this file: 0026, 0029.)
CREATE OR REPLACE FUNCTION ferry.lookup_user(p_name text)
 RETURNS TABLE(id uuid, name text, retry_after_seconds integer)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    c_window constant interval := interval '10 minutes';
    c_ration constant int := 30;
    v_caller uuid := ferry.current_user_id();
    v_start timestamptz;
    v_count int;
    v_ids uuid[];
    v_names text[];
BEGIN
    IF v_caller IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'FR401', MESSAGE = 'invalid token';
    END IF;
    INSERT INTO ferry.user_lookups AS l (user_id, window_start, lookups) VALUES (v_caller, now(), 1)
    ON CONFLICT (user_id) DO UPDATE
        SET window_start = CASE WHEN l.window_start <= now() - c_window THEN now() ELSE l.window_start END,
            lookups = CASE WHEN l.window_start <= now() - c_window THEN 1 ELSE l.lookups + 1 END
    RETURNING l.window_start, l.lookups INTO v_start, v_count;
    IF v_count > c_ration THEN
        RETURN QUERY SELECT NULL::uuid, NULL::text,
            greatest(1, ceil(extract(epoch FROM v_start + c_window - now())))::int;
        RETURN;
    END IF;
    SELECT array_agg(m.id), array_agg(m.found) INTO v_ids, v_names
      FROM (SELECT u.id, coalesce(u.name, u.lookup_name) AS found FROM ferry.users u
             WHERE (u.name = p_name OR lower(u.lookup_name) = lower(p_name)) AND ferry.user_findable(u)
             LIMIT 2) m;
    IF cardinality(v_ids) = 1 THEN
        RETURN QUERY SELECT v_ids[1], v_names[1], NULL::int;
    ELSE
        RETURN QUERY SELECT NULL::uuid, NULL::text, NULL::int;
    END IF;
END
$function$;
REVOKE ALL ON FUNCTION ferry.lookup_user(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.lookup_user(text) TO ferry_app;

-- Revokes every unrevoked token of a user and tells every instance to drop
-- its cached checks of them (NOTIFY ferry_users): the hashes revoked, as text,
-- for this instance's cache. For the two console functions below, which check
-- the operator first; no one else may call it.
-- (Versioned definitions before this file: 0027.)
CREATE OR REPLACE FUNCTION ferry.revoke_all_tokens_of(p_user uuid)
 RETURNS text[]
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_hashes text[];
BEGIN
    WITH r AS (
        UPDATE ferry.tokens t SET revoked = true WHERE t.user_id = p_user AND NOT t.revoked RETURNING t.token_hash
    )
    SELECT coalesce(array_agg(r.token_hash::text), '{}') INTO v_hashes FROM r;
    PERFORM pg_notify('ferry_users', p_user::text);
    RETURN v_hashes;
END
$function$;
REVOKE ALL ON FUNCTION ferry.revoke_all_tokens_of(uuid) FROM PUBLIC;

-- Records when tokens were used: [{"hash": "\\x…", "at": ms}], from an
-- instance's recorder. Only ever moves last_used_at forward.
-- (Versioned definitions before this file: 0027.)
CREATE OR REPLACE FUNCTION ferry.record_token_uses(p_uses jsonb)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_count int;
BEGIN
    WITH u AS (
        SELECT x.hash::bytea AS hash, max(to_timestamp(x.at / 1000.0)) AS at
          FROM jsonb_to_recordset(p_uses) AS x(hash text, at bigint)
         GROUP BY 1
    )
    UPDATE ferry.tokens t SET last_used_at = u.at
      FROM u WHERE t.token_hash = u.hash AND (t.last_used_at IS NULL OR t.last_used_at < u.at);
    GET DIAGNOSTICS v_count = ROW_COUNT;
    RETURN v_count;
END
$function$;
REVOKE ALL ON FUNCTION ferry.record_token_uses(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.record_token_uses(jsonb) TO ferry_app;

-- Records when JWT users made requests: [{"user": "<uuid>", "at": ms}], from
-- an instance's recorder. Only ever moves last_used_at forward.
-- (Versioned definitions before this file: 0029.)
CREATE OR REPLACE FUNCTION ferry.record_user_uses(p_uses jsonb)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_count int;
BEGIN
    WITH s AS (
        SELECT x."user" AS id, max(to_timestamp(x.at / 1000.0)) AS at
          FROM jsonb_to_recordset(p_uses) AS x("user" uuid, at bigint)
         GROUP BY 1
    )
    UPDATE ferry.users u SET last_used_at = s.at
      FROM s WHERE u.id = s.id AND (u.last_used_at IS NULL OR u.last_used_at < s.at);
    GET DIAGNOSTICS v_count = ROW_COUNT;
    RETURN v_count;
END
$function$;
REVOKE ALL ON FUNCTION ferry.record_user_uses(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.record_user_uses(jsonb) TO ferry_app;
