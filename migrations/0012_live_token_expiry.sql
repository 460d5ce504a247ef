-- 0012_live_token_expiry.sql: the token check also says when the token expires.
--
-- Applied by `ferry migrate` as the OWNER role, in one transaction, after 0011.
--
-- Ferry keeps the tokens it has checked in a short-lived in-process cache
-- (auth.token_cache_seconds, Sources/Ferry/Auth/TokenCache.swift): a request
-- whose token was checked within that time starts with set_config alone
-- instead of the lookup. A cached token must still stop working the moment it
-- expires, so the check now returns the expiry with the user id, and
-- ferry.live_tokens gains the column it reads it from. The expiry of a live
-- token is no secret from the app role: it already reads the view's hashes
-- and user ids (see 0009 for why that grants nothing).
--
-- CREATE OR REPLACE VIEW may only add columns at the end; the view keeps its
-- owner, its grants and its definition of "live".
CREATE OR REPLACE VIEW ferry.live_tokens AS
    SELECT t.token_hash, t.user_id, t.expires_at
      FROM ferry.tokens t
     WHERE NOT t.revoked
       AND t.expires_at OPERATOR(pg_catalog.>) pg_catalog.now();
COMMENT ON VIEW ferry.live_tokens IS
    'Unrevoked, unexpired tokens: hash, user and expiry. Read by the per-request token check.';
