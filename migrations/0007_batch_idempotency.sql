-- 0007_batch_idempotency.sql: Idempotency-Key claims.
--
-- Applied by `ferry migrate` as the OWNER role, in one transaction, after 0004.
--
-- Design. A write carrying an Idempotency-Key runs in one transaction that
-- (1) claims the key, (2) does the write, (3) stores the completed response
-- in ferry.idempotency_keys, and commits. The record and the write it
-- describes commit together or not at all: a crash anywhere before COMMIT
-- leaves neither, so the retry simply runs again; no lease or in-progress
-- row is needed (status stays NOT NULL in practice; a NULL status is treated
-- as in progress).
--
-- Concurrency. The claim takes a transaction-level advisory lock on
-- (user, key) without waiting. A second request with the same key while
-- the first still runs fails to take it and answers 409
-- idempotency_key_in_use. Once the first commits, the lock is released
-- only after its record is visible, and the claim's SELECT (a fresh
-- snapshot under READ COMMITTED) sees it: the retry is replayed. A hash
-- collision between two users' keys can at worst cause a spurious 409.
--
-- Expired records are deleted by the claim itself (so a key is reusable as
-- soon as it expires) and in bulk by ferry.purge_tombstones.

-- The state of p_key for the caller: 'new' (claimed; run the request),
-- 'in_use', or 'stored' with the stored request hash and response.
CREATE FUNCTION ferry.idempotency_claim(p_key text)
    RETURNS TABLE (state text, request_hash bytea, status int, response_headers jsonb, response_body bytea)
    LANGUAGE plpgsql VOLATILE
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
DECLARE
    v_user uuid := ferry.current_user_id();
    v_row ferry.idempotency_keys;
BEGIN
    IF v_user IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'FR401', MESSAGE = 'no caller';
    END IF;
    IF NOT pg_try_advisory_xact_lock(hashtextextended('ferry.idempotency/' || v_user::text || '/' || p_key, 0)) THEN
        RETURN QUERY SELECT 'in_use'::text, NULL::bytea, NULL::int, NULL::jsonb, NULL::bytea;
        RETURN;
    END IF;
    DELETE FROM ferry.idempotency_keys k WHERE k.user_id = v_user AND k.key = p_key AND k.expires_at <= now();
    SELECT * INTO v_row FROM ferry.idempotency_keys k WHERE k.user_id = v_user AND k.key = p_key;
    IF NOT FOUND THEN
        RETURN QUERY SELECT 'new'::text, NULL::bytea, NULL::int, NULL::jsonb, NULL::bytea;
    ELSIF v_row.status IS NULL THEN
        RETURN QUERY SELECT 'in_use'::text, NULL::bytea, NULL::int, NULL::jsonb, NULL::bytea;
    ELSE
        RETURN QUERY SELECT 'stored'::text, v_row.request_hash, v_row.status, v_row.response_headers, v_row.response_body;
    END IF;
END
$$;

-- Stores the completed response of a claimed key, in the write's transaction.
CREATE FUNCTION ferry.idempotency_store(
    p_key text, p_request_hash bytea, p_status int, p_headers jsonb, p_body bytea, p_ttl_hours int
) RETURNS void
    LANGUAGE sql VOLATILE
    SET search_path = pg_catalog, ferry, pg_temp
BEGIN ATOMIC
    INSERT INTO ferry.idempotency_keys (user_id, key, request_hash, status, response_headers, response_body, expires_at)
    VALUES (ferry.current_user_id(), p_key, p_request_hash, p_status, p_headers, p_body,
            now() + make_interval(hours => p_ttl_hours));
END;

REVOKE EXECUTE ON FUNCTION ferry.idempotency_claim(text), ferry.idempotency_store(text, bytea, int, jsonb, bytea, int) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.idempotency_claim(text), ferry.idempotency_store(text, bytea, int, jsonb, bytea, int) TO ferry_app;
