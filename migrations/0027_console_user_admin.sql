-- 0027_console_user_admin.sql: what an operator answering a support ticket
-- needs on a user (issue 48): disable a user and enable them again, revoke
-- all of a user's tokens, see when each token was last used, find users by
-- any part of their name, and search the audit log.
--
-- Applied by `ferry migrate` as the OWNER role, in one transaction, after 0026.
--
-- Disabling: ferry.users.disabled_at. A disabled user's tokens are revoked in
-- the same transaction, no token is issued to them (ferry.issue_token raises
-- FR403, so a sign-in with the right password says "disabled"), a JWT of
-- theirs is refused when verified (ferry.sign_in_external raises FR401), and
-- they cannot be found by name (ferry.user_findable, 0026). The token check
-- itself is unchanged (a revoked token is no live token), so the hot path
-- costs what it did. Every instance drops its cached checks of the user's
-- tokens at once: the disabling instance itself, and the others on
-- NOTIFY ferry_users (payload: the user id), which their live listener hears.
-- Enabling clears disabled_at: the user signs in again (their old tokens stay
-- revoked; a JWT user's next token works at once).
--
-- Last use: ferry.tokens.last_used_at, written in batches by each instance's
-- background recorder (ferry.record_token_uses) from the token checks it made,
-- never on a request's path; precise to the recorder's interval.

ALTER TABLE ferry.users ADD COLUMN disabled_at timestamptz;
COMMENT ON COLUMN ferry.users.disabled_at IS
    'When an operator disabled the user (the console); null for an active user. See core 0027.';
ALTER TABLE ferry.tokens ADD COLUMN last_used_at timestamptz;
COMMENT ON COLUMN ferry.tokens.last_used_at IS
    'About when the token was last used (written in batches by ferry.record_token_uses); null if never seen.';

CREATE OR REPLACE FUNCTION ferry.user_findable(p_user ferry.users) RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, ferry, pg_temp
RETURN p_user.disabled_at IS NULL;

-- 0001's, refusing a disabled user. The user's row is locked FOR SHARE, so a
-- token issued while the user is being disabled is either refused or revoked
-- with the others.
CREATE OR REPLACE FUNCTION ferry.issue_token(p_user_id uuid, p_token_hash bytea, p_ttl_seconds int)
    RETURNS timestamptz
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
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
$$;

-- 0016's, refusing a disabled user's JWT.
CREATE OR REPLACE FUNCTION ferry.sign_in_external(p_issuer pg_catalog.text, p_subject pg_catalog.text, p_claims pg_catalog.text)
    RETURNS pg_catalog.text
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
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
$$;

-- Revokes every unrevoked token of a user and tells every instance to drop
-- its cached checks of them (NOTIFY ferry_users): the hashes revoked, as text,
-- for this instance's cache. For the two console functions below, which check
-- the operator first; no one else may call it.
CREATE FUNCTION ferry.revoke_all_tokens_of(p_user uuid) RETURNS text[]
    LANGUAGE plpgsql VOLATILE
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
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
$$;
REVOKE EXECUTE ON FUNCTION ferry.revoke_all_tokens_of(uuid) FROM PUBLIC;

-- Disables (p_disabled) or enables a user (admins only). Disabling revokes
-- every unrevoked token of theirs and tells every instance to drop its cached
-- checks of them. Returns the hashes of the tokens revoked (as text, for this
-- instance's cache), or NULL when there is no such user.
CREATE FUNCTION ferry.console_set_user_disabled(p_token_hash bytea, p_user uuid, p_disabled boolean) RETURNS text[]
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
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
$$;

-- Revokes every unrevoked token of a user (admins only) and tells every
-- instance to drop its cached checks of them. Returns the hashes revoked, or
-- NULL when there is no such user. A JWT is not Ferry's to revoke.
CREATE FUNCTION ferry.console_revoke_user_tokens(p_token_hash bytea, p_user uuid) RETURNS text[]
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
BEGIN
    PERFORM ferry.console_operator(p_token_hash, true);
    IF NOT EXISTS (SELECT 1 FROM ferry.users u WHERE u.id = p_user) THEN
        RETURN NULL;
    END IF;
    RETURN ferry.revoke_all_tokens_of(p_user);
END
$$;

-- Whether a user is disabled, and since when (ms), for the console's user page.
CREATE FUNCTION ferry.console_user_state(p_token_hash bytea, p_user uuid)
    RETURNS TABLE (disabled_at bigint)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
BEGIN
    PERFORM ferry.console_operator(p_token_hash);
    RETURN QUERY SELECT floor(extract(epoch FROM u.disabled_at) * 1000)::bigint FROM ferry.users u WHERE u.id = p_user;
END
$$;

-- Records when tokens were used: [{"hash": "\\x…", "at": ms}], from an
-- instance's recorder. Only ever moves last_used_at forward.
CREATE FUNCTION ferry.record_token_uses(p_uses jsonb) RETURNS int
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
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
$$;

-- 0018's, with the token's last use.
DROP FUNCTION ferry.console_user_tokens(bytea, uuid);
CREATE FUNCTION ferry.console_user_tokens(p_token_hash bytea, p_user uuid)
    RETURNS TABLE (token_id text, created_at bigint, expires_at bigint, revoked boolean, last_used_at bigint)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
BEGIN
    PERFORM ferry.console_operator(p_token_hash);
    RETURN QUERY
        SELECT encode(substring(t.token_hash FROM 1 FOR 8), 'hex'), floor(extract(epoch FROM t.created_at) * 1000)::bigint,
               floor(extract(epoch FROM t.expires_at) * 1000)::bigint, t.revoked,
               floor(extract(epoch FROM t.last_used_at) * 1000)::bigint
          FROM ferry.tokens t WHERE t.user_id = p_user
         ORDER BY t.created_at DESC, t.token_hash LIMIT 200;
END
$$;

-- 0018's users, found by any part of the name (case-insensitive) as well as
-- by its start, or by id; with whether each is disabled. Names that start with
-- the search come first. For operators only: app users find one another only
-- by exact name (0026).
DROP FUNCTION ferry.console_users(bytea, text, int);
CREATE FUNCTION ferry.console_users(p_token_hash bytea, p_search text, p_limit int)
    RETURNS TABLE (id uuid, name text, created_at bigint, live_tokens bigint, disabled boolean)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
DECLARE
    v_pattern text := replace(replace(replace(coalesce(p_search, ''), '\', '\\'), '%', '\%'), '_', '\_');
BEGIN
    PERFORM ferry.console_operator(p_token_hash);
    RETURN QUERY
        SELECT u.id, u.name, floor(extract(epoch FROM u.created_at) * 1000)::bigint,
               (SELECT count(*) FROM ferry.tokens t WHERE t.user_id = u.id AND NOT t.revoked AND t.expires_at > now()),
               u.disabled_at IS NOT NULL
          FROM ferry.users u
         WHERE coalesce(p_search, '') = ''
            OR u.name ILIKE '%' || v_pattern || '%'
            OR u.id::text = lower(p_search)
         ORDER BY NOT (u.name LIKE v_pattern || '%'), u.name LIMIT greatest(1, least(p_limit, 500));
END
$$;

-- The audit log, newest first, only entries whose operator, action, target
-- (as JSON text) or request id contain p_search (case-insensitive); before
-- p_before (an entry id) when given, for paging back.
CREATE FUNCTION ferry.console_audit_search(p_token_hash bytea, p_search text, p_before bigint, p_limit int)
    RETURNS TABLE (id bigint, at bigint, operator_name text, action text, target jsonb, status int, request_id text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
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
$$;

REVOKE EXECUTE ON FUNCTION
    ferry.console_set_user_disabled(bytea, uuid, boolean),
    ferry.console_revoke_user_tokens(bytea, uuid),
    ferry.console_user_state(bytea, uuid),
    ferry.record_token_uses(jsonb),
    ferry.console_user_tokens(bytea, uuid),
    ferry.console_users(bytea, text, int),
    ferry.console_audit_search(bytea, text, bigint, int)
  FROM PUBLIC;
GRANT EXECUTE ON FUNCTION
    ferry.console_set_user_disabled(bytea, uuid, boolean),
    ferry.console_revoke_user_tokens(bytea, uuid),
    ferry.console_user_state(bytea, uuid),
    ferry.record_token_uses(jsonb),
    ferry.console_user_tokens(bytea, uuid),
    ferry.console_users(bytea, text, int),
    ferry.console_audit_search(bytea, text, bigint, int)
  TO ferry_app;
