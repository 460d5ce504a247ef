-- 0029_jwt_lookup_names_and_last_use.sql: JWT users found by their identity
-- provider's email (or another claim), and a JWT user's last use (issue 48).
--
-- Applied by `ferry migrate` as the OWNER role, in one transaction, after 0028.
--
-- Lookup names. A JWT user has no name (0016), so GET /v1/users/lookup could
-- not find them. A provider may name a claim (`lookup_claim` in
-- auth.jwt_providers, off by default) whose value Ferry keeps as the user's
-- ferry.users.lookup_name; for `email`, only when the token says
-- `email_verified: true` (Ferry checks that before it calls here, else an
-- unverified address would let anyone answer to another's). The value follows
-- the latest token verified: ferry.sign_in_external writes it only when it
-- changed (so a sign-in writes nothing more than before), and clears it when
-- the token no longer gives one (the email became unverified, or the provider
-- dropped the setting). ferry.lookup_user matches a user name exactly, or a
-- lookup name exactly but for ASCII case (emails are typed in any case; the
-- route only takes ASCII names, so lower() is the same in every collation).
-- When two users match (one person signed in through two providers, or a
-- password user named as another's email), it answers as for nobody: no
-- "ambiguous" answer tells that a name is taken.
--
-- Also replaced: console_act_as and console_users, which knew users by name
-- only (a JWT user's console page answered 404). The 3-argument
-- sign_in_external stays, for instances of the previous release during a
-- rolling upgrade (it leaves lookup_name alone).
--
-- Last use. A JWT user has no Ferry token whose last_used_at could say when
-- they were last seen. Each instance notes the user of every JWT request (in
-- memory) and writes the notes in batches with ferry.record_user_uses, off the
-- request's path, like ferry.record_token_uses (0027); the console's user page
-- shows it.

ALTER TABLE ferry.users
    ADD COLUMN lookup_name text,
    ADD COLUMN last_used_at timestamptz,
    ADD CONSTRAINT users_lookup_name CHECK (
        lookup_name IS NULL
        OR (issuer IS NOT NULL AND lookup_name ~ '^[A-Za-z0-9_][A-Za-z0-9_.@+-]*$' AND octet_length(lookup_name) <= 320));
COMMENT ON COLUMN ferry.users.lookup_name IS
    'For a JWT user: the value of its provider''s lookup_claim (a verified email), by which GET /v1/users/lookup finds it. See core 0029.';
COMMENT ON COLUMN ferry.users.last_used_at IS
    'For a JWT user: about when a request last carried one of its JWTs (written in batches by ferry.record_user_uses).';
-- Not partial: with `WHERE lookup_name IS NOT NULL` the planner would not use it
-- beside users_name_key for lookup_user's OR (a sequential scan; a BitmapOr without).
CREATE INDEX users_lookup_name_lower ON ferry.users (lower(lookup_name));

-- 0027's, with the lookup name: kept (on first sight) or changed only when it
-- differs from the stored one. p_lookup_name is NULL when the token gives none.
CREATE FUNCTION ferry.sign_in_external(p_issuer pg_catalog.text, p_subject pg_catalog.text, p_claims pg_catalog.text,
                                       p_lookup_name pg_catalog.text)
    RETURNS pg_catalog.text
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
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
$$;

-- 0026's, also matching lookup names, and answering as for nobody when more
-- than one findable user matches.
CREATE OR REPLACE FUNCTION ferry.lookup_user(p_name text)
    RETURNS TABLE (id uuid, name text, retry_after_seconds int)
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
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
$$;

-- Records when JWT users made requests: [{"user": "<uuid>", "at": ms}], from
-- an instance's recorder. Only ever moves last_used_at forward.
CREATE FUNCTION ferry.record_user_uses(p_uses jsonb) RETURNS int
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
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
$$;

-- 0027's, with the user's last use (a JWT user's; null for others) and lookup name.
DROP FUNCTION ferry.console_user_state(bytea, uuid);
CREATE FUNCTION ferry.console_user_state(p_token_hash bytea, p_user uuid)
    RETURNS TABLE (disabled_at bigint, last_used_at bigint, lookup_name text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
BEGIN
    PERFORM ferry.console_operator(p_token_hash);
    RETURN QUERY SELECT floor(extract(epoch FROM u.disabled_at) * 1000)::bigint,
                        floor(extract(epoch FROM u.last_used_at) * 1000)::bigint, u.lookup_name
                   FROM ferry.users u WHERE u.id = p_user;
END
$$;

-- 0018's, for a JWT user too: they have no name, so the console's user page
-- answered 404 for them. The name shown is the user name, else the lookup
-- name, else the provider's subject (what the provider calls them).
CREATE OR REPLACE FUNCTION ferry.console_act_as(p_token_hash bytea, p_user uuid) RETURNS text
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
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
$$;

-- 0027's users, JWT users included: found by any part of the lookup name or
-- the provider's subject as well, and named by them (a JWT user has no name),
-- so that an operator answering "I can't see my list" finds the user by the
-- email they wrote from.
CREATE OR REPLACE FUNCTION ferry.console_users(p_token_hash bytea, p_search text, p_limit int)
    RETURNS TABLE (id uuid, name text, created_at bigint, live_tokens bigint, disabled boolean)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
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
$$;

REVOKE EXECUTE ON FUNCTION
    ferry.sign_in_external(text, text, text, text),
    ferry.record_user_uses(jsonb),
    ferry.console_user_state(bytea, uuid)
  FROM PUBLIC;
GRANT EXECUTE ON FUNCTION
    ferry.sign_in_external(text, text, text, text),
    ferry.record_user_uses(jsonb),
    ferry.console_user_state(bytea, uuid)
  TO ferry_app;
