-- 0016_jwt_identities.sql: users from an identity provider's JWTs, and their claims in SQL.
--
-- Applied by `ferry migrate` as the OWNER role, in one transaction, after 0015.
--
-- Ferry accepts JWTs from the providers in auth.jwt_providers (issue 36). Each
-- (issuer, subject) pair is one user, created on first sight: a row in
-- ferry.users, so that app tables keep their foreign keys to it (creator_id,
-- owner_id, ...). Such a user has no name and no password; Ferry's own users
-- keep both.
--
-- The user's id is derived from the pair (ferry.external_user_id), not
-- drawn at random: creating it is an INSERT ... ON CONFLICT DO NOTHING that
-- needs no read-back, so concurrent first requests of one user make exactly
-- one row, and every Ferry instance (and a database restored from backup)
-- gives the same token the same id. Two providers' equal subjects get two ids.
--
-- What the app role gains: EXECUTE on ferry.sign_in_external, which can make
-- a user row for any pair. That is no new power: the role can already set
-- ferry.user_id to anything (see 0009); Ferry calls it only for a token whose
-- signature and claims it has verified.

ALTER TABLE ferry.users
    ALTER COLUMN name DROP NOT NULL,
    ALTER COLUMN password_hash DROP NOT NULL,
    ADD COLUMN issuer text,
    ADD COLUMN subject text,
    ADD CONSTRAINT users_kind CHECK (
        (issuer IS NULL AND subject IS NULL AND name IS NOT NULL AND password_hash IS NOT NULL)
        OR (issuer IS NOT NULL AND subject IS NOT NULL AND password_hash IS NULL)),
    ADD CONSTRAINT users_identity_length CHECK (octet_length(issuer) <= 2048 AND octet_length(subject) <= 1024),
    ADD CONSTRAINT users_identity_unique UNIQUE (issuer, subject);
COMMENT ON COLUMN ferry.users.issuer IS 'For a user from a JWT: the provider''s iss. Null for Ferry''s own users.';
COMMENT ON COLUMN ferry.users.subject IS 'For a user from a JWT: the value of the provider''s user claim (sub by default).';

-- The id of the user an (issuer, subject) pair names: a name-based UUID
-- (RFC 9562 §5.8, version 8) from SHA-256 of 'ferry-user', the issuer, a NUL
-- byte and the subject. A NUL cannot occur in PostgreSQL text, so no two pairs
-- share the hashed bytes.
CREATE FUNCTION ferry.external_user_id(p_issuer pg_catalog.text, p_subject pg_catalog.text) RETURNS pg_catalog.uuid
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN (
        SELECT pg_catalog.encode(
                   pg_catalog.set_byte(
                       pg_catalog.set_byte(pg_catalog.substr(h, 1, 16), 6,
                                           (pg_catalog.get_byte(h, 6) OPERATOR(pg_catalog.&) 15) OPERATOR(pg_catalog.|) 128),
                       8, (pg_catalog.get_byte(h, 8) OPERATOR(pg_catalog.&) 63) OPERATOR(pg_catalog.|) 128),
                   'hex')::pg_catalog.uuid
          FROM (SELECT pg_catalog.sha256(pg_catalog.convert_to('ferry-user', 'UTF8')
                                         OPERATOR(pg_catalog.||) pg_catalog.convert_to(p_issuer, 'UTF8')
                                         OPERATOR(pg_catalog.||) '\x00'::pg_catalog.bytea
                                         OPERATOR(pg_catalog.||) pg_catalog.convert_to(p_subject, 'UTF8')) AS h) AS digest);

-- Starts the transaction of a request whose JWT Ferry has just verified (and
-- not recently: a cached one only sets the two settings): makes the user row
-- on first sight, sets ferry.user_id and ferry.claims for the transaction,
-- and returns the user id.
CREATE FUNCTION ferry.sign_in_external(p_issuer pg_catalog.text, p_subject pg_catalog.text, p_claims pg_catalog.text)
    RETURNS pg_catalog.text
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
DECLARE
    v_id uuid := ferry.external_user_id(p_issuer, p_subject);
BEGIN
    IF NOT EXISTS (SELECT 1 FROM ferry.users u WHERE u.id = v_id) THEN
        -- A concurrent first request waits here for the other's row, then does nothing.
        INSERT INTO ferry.users (id, issuer, subject) VALUES (v_id, p_issuer, p_subject)
        ON CONFLICT DO NOTHING;
    END IF;
    PERFORM set_config('ferry.user_id', v_id::text, true);
    PERFORM set_config('ferry.claims', p_claims, true);
    RETURN v_id::text;
END
$$;
REVOKE EXECUTE ON FUNCTION ferry.sign_in_external(text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.sign_in_external(text, text, text) TO ferry_app;

-- The verified claims of the request's JWT, for policies: '{}' for Ferry's own
-- tokens and outside a request. Plain, inlinable SQL like ferry.current_user_id().
CREATE FUNCTION ferry.claims() RETURNS pg_catalog.jsonb
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN COALESCE(NULLIF(pg_catalog.current_setting('ferry.claims', true), '')::pg_catalog.jsonb, '{}'::pg_catalog.jsonb);

-- One claim as text (a string's value, other JSON as its text), null when absent:
-- `org_id = ferry.claim('org_id')::uuid`.
CREATE FUNCTION ferry.claim(p_name pg_catalog.text) RETURNS pg_catalog.text
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN ferry.claims() OPERATOR(pg_catalog.->>) p_name;
