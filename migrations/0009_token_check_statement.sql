-- 0009_token_check_statement.sql: the per-request token check as a plain statement.
--
-- Applied by `ferry migrate` as the OWNER role, in one transaction, after 0008.
--
-- Every authenticated request starts with the token check. Until now that was a
-- call of ferry.begin_request, a plpgsql SECURITY DEFINER function: the lookup
-- ran through SPI inside the function call. Ferry now sends the check as one
-- top-level prepared statement instead (Sources/Ferry/Database/Database.swift):
--
--   SELECT COALESCE((SELECT pg_catalog.set_config('ferry.user_id', v.user_id::pg_catalog.text, true)
--                      FROM ferry.live_tokens v WHERE v.token_hash = $1::pg_catalog.bytea),
--                   ferry.invalid_token())
--
-- Replayed under pgbench -M prepared (the check plus the GET's statement, 8
-- clients, 3 interleaved rounds), PostgreSQL's CPU per GET went from 141 / 139 /
-- 149 us to 130 / 132 / 137 us.
--
-- What the app role gains: SELECT on live_tokens, the hash and user id of each
-- live token, through a view that runs with its owner's rights (ferry.tokens
-- itself stays closed to it). That is no new power. A token hash is a SHA-256
-- of 256 random bits: it cannot be turned back into a token, and Ferry hashes
-- whatever token it is sent, so a hash is not a credential. And the app role
-- can already act as any user: ferry.user_id, which every policy reads, is a
-- setting any role may set. Row Level Security keeps users apart because Ferry
-- sets it only from a live token, not because the role could not set it.
--
-- The contract is unchanged: no live token, FR401 'invalid token', and the
-- pipeline's transaction aborts before the action's statements run; a live
-- token sets ferry.user_id for the transaction and the statement returns the
-- user id. ferry.begin_request stays, for callers that prefer a function, and
-- now reads the same view, so "live" has one definition.

CREATE VIEW ferry.live_tokens AS
    SELECT t.token_hash, t.user_id
      FROM ferry.tokens t
     WHERE NOT t.revoked
       AND t.expires_at OPERATOR(pg_catalog.>) pg_catalog.now();
COMMENT ON VIEW ferry.live_tokens IS
    'Unrevoked, unexpired tokens: hash and user. Read by the per-request token check.';

-- Raises the token check's 401. Called only when no live token matched.
CREATE FUNCTION ferry.invalid_token() RETURNS pg_catalog.text
    LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
    RAISE EXCEPTION USING ERRCODE = 'FR401', MESSAGE = 'invalid token';
END
$$;

-- Same signature, grants and behaviour as 0008; every name still qualified
-- (see 0008 for why it needs no SET search_path).
CREATE OR REPLACE FUNCTION ferry.begin_request(p_token_hash pg_catalog.bytea) RETURNS pg_catalog.uuid
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
AS $$
DECLARE
    v_user pg_catalog.text;
BEGIN
    SELECT pg_catalog.set_config('ferry.user_id', v.user_id::pg_catalog.text, true) INTO v_user
      FROM ferry.live_tokens v
     WHERE v.token_hash OPERATOR(pg_catalog.=) p_token_hash;
    IF v_user IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'FR401', MESSAGE = 'invalid token';
    END IF;
    RETURN v_user::pg_catalog.uuid;
END
$$;

REVOKE EXECUTE ON FUNCTION ferry.invalid_token() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.invalid_token() TO ferry_app;
GRANT SELECT ON ferry.live_tokens TO ferry_app;
