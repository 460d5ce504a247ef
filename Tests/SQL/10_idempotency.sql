-- role: app
-- Idempotency-Key claims (migrations/0005) as the server's role uses them:
-- per user, stored responses found again, expired keys reusable. The
-- concurrent case (409 while the first request runs) is tested over HTTP.

SELECT set_config('idemtest.a', ferry.create_user('idem_a', 'pw')::text, false),
       set_config('idemtest.b', ferry.create_user('idem_b', 'pw')::text, false);

-- Without a caller there is nothing to claim.
SELECT pg_temp.expect_error($$SELECT * FROM ferry.idempotency_claim('k')$$, 'FR401');

SELECT set_config('ferry.user_id', current_setting('idemtest.a'), false);
DO $do$
DECLARE c record;
BEGIN
    SELECT * INTO c FROM ferry.idempotency_claim('k1');
    PERFORM pg_temp.check(c.state = 'new', 'a fresh key is new');
    PERFORM ferry.idempotency_store('k1', '\x01', 201, '[["ETag", "\"1\""]]', '\x7b7d', 24);
    SELECT * INTO c FROM ferry.idempotency_claim('k1');
    PERFORM pg_temp.check(c.state = 'stored', 'a stored key is found');
    PERFORM pg_temp.check(c.request_hash = '\x01' AND c.status = 201 AND c.response_body = '\x7b7d',
                          'the stored request hash and response come back');
    PERFORM pg_temp.check((SELECT expires_at BETWEEN now() + interval '23 hours' AND now() + interval '25 hours'
                             FROM ferry.idempotency_keys WHERE key = 'k1'), 'kept for ttl_hours');
END $do$;
-- Storing the same key twice is refused (the claim prevents it in practice).
SELECT pg_temp.expect_error($$SELECT ferry.idempotency_store('k1', '\x02', 200, '[]', '\x', 24)$$, '23505');

-- Keys are per user, and another user's records are invisible.
SELECT set_config('ferry.user_id', current_setting('idemtest.b'), false);
DO $do$
DECLARE c record;
BEGIN
    PERFORM pg_temp.check((SELECT count(*) FROM ferry.idempotency_keys) = 0, 'B sees none of A''s keys');
    SELECT * INTO c FROM ferry.idempotency_claim('k1');
    PERFORM pg_temp.check(c.state = 'new', 'the same key is new for another user');
END $do$;

-- An expired key is deleted by the claim and is new again.
SELECT set_config('ferry.user_id', current_setting('idemtest.a'), false);
UPDATE ferry.idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = 'k1';
DO $do$
DECLARE c record;
BEGIN
    SELECT * INTO c FROM ferry.idempotency_claim('k1');
    PERFORM pg_temp.check(c.state = 'new', 'an expired key is new again');
    PERFORM pg_temp.check((SELECT count(*) FROM ferry.idempotency_keys WHERE key = 'k1') = 0, 'the expired record is gone');
END $do$;

SELECT 'PASS 10_idempotency';
