-- 0008_begin_request_lean.sql: a cheaper ferry.begin_request.
--
-- Applied by `ferry migrate` as the OWNER role, in one transaction, after 0001.
--
-- begin_request starts every authenticated request, so its cost is paid on
-- every GET. perf of PostgreSQL under `bench/api.sh` GETs put a quarter of the
-- backend's CPU in it (fmgr_security_definer and below): a GUC nest level and
-- search-path switch for its SET clause, then two SPI statements (the token
-- lookup, then PERFORM set_config). Replayed under pgbench -M prepared (this
-- function plus the GET's statement in one pipeline, 8 clients), the version
-- below ran about 17% more pipelines per second than 0001's.
--
-- Same contract as 0001: one primary-key lookup of a live, unrevoked token;
-- sets ferry.user_id for the rest of the transaction; returns the user id;
-- raises FR401 'invalid token' otherwise. Same signature, so the EXECUTE
-- grant to the app role carries over.
--
-- Why dropping SET search_path is safe here: a SECURITY DEFINER function must
-- not let the caller's search_path choose what its names mean. Every name in
-- this body is schema-qualified instead: the table (ferry.tokens), the
-- functions (pg_catalog.set_config, pg_catalog.now), the operators
-- (OPERATOR(pg_catalog.=), OPERATOR(pg_catalog.>)) and the types
-- (pg_catalog.text, pg_catalog.uuid, pg_catalog.bytea). What is left is
-- syntax (NOT, IS NULL), a boolean constant and a string literal whose type
-- comes from set_config's signature. Tests/SQL/03_auth.sql calls it under a
-- hostile search_path. Any later change to this body must keep every name
-- qualified, or put the SET clause back.
CREATE OR REPLACE FUNCTION ferry.begin_request(p_token_hash pg_catalog.bytea) RETURNS pg_catalog.uuid
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
AS $$
DECLARE
    v_user pg_catalog.text;
BEGIN
    -- One statement both finds the user and sets the GUC; set_config runs
    -- only for the row found, so no row leaves ferry.user_id untouched.
    SELECT pg_catalog.set_config('ferry.user_id', t.user_id::pg_catalog.text, true) INTO v_user
      FROM ferry.tokens t
     WHERE t.token_hash OPERATOR(pg_catalog.=) p_token_hash
       AND NOT t.revoked
       AND t.expires_at OPERATOR(pg_catalog.>) pg_catalog.now();
    IF v_user IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'FR401', MESSAGE = 'invalid token';
    END IF;
    RETURN v_user::pg_catalog.uuid;
END
$$;
