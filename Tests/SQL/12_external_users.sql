-- role: app
-- Users from providers' JWTs (migration 0016), through what the server
-- (connected as ferry_app) calls: ferry.sign_in_external, ferry.claims(),
-- ferry.claim().

-- Outside a request there are no claims, and no claim.
DO $$
BEGIN
    PERFORM pg_temp.check(ferry.claims() = '{}'::jsonb, 'claims() outside a request is {}');
    PERFORM pg_temp.check(ferry.claim('org_id') IS NULL, 'claim() outside a request is null');
END $$;

-- First sight makes the user; the same pair again is the same user; another
-- issuer's equal subject is another user; claims are set for the transaction.
DO $$
DECLARE a uuid; again uuid; other uuid;
BEGIN
    a := ferry.sign_in_external('https://idp-a', 'alice', '{"org_id": "acme", "roles": ["x"]}')::uuid;
    PERFORM pg_temp.check(ferry.current_user_id() = a, 'sign_in_external sets ferry.user_id');
    PERFORM pg_temp.check(ferry.claim('org_id') = 'acme', 'claim() reads a string claim');
    PERFORM pg_temp.check(ferry.claim('roles') = '["x"]', 'claim() gives other JSON as its text');
    PERFORM pg_temp.check(ferry.claim('missing') IS NULL, 'claim() of an absent claim is null');
    PERFORM pg_temp.check(a = ferry.external_user_id('https://idp-a', 'alice'), 'the id is derived from the pair');
    again := ferry.sign_in_external('https://idp-a', 'alice', '{}')::uuid;
    PERFORM pg_temp.check(again = a, 'the same pair is the same user');
    other := ferry.sign_in_external('https://idp-b', 'alice', '{}')::uuid;
    PERFORM pg_temp.check(other <> a, 'an equal sub of another issuer is another user');
    PERFORM pg_temp.check(ferry.external_user_id('https://idp-a', 'alice') <> ferry.external_user_id('https://idp-aalic', 'e'),
                          'the pair is not merely concatenated');
    PERFORM pg_temp.check(substr(a::text, 15, 1) = '8', 'a version 8 UUID');
    PERFORM pg_temp.check((SELECT name FROM ferry.me()) IS NULL, 'a user from a JWT has no name');
END $$;

-- Such a user cannot sign in with a password: it has none.
DO $$
DECLARE r record;
BEGIN
    SELECT * INTO r FROM ferry.authenticate('alice', 'anything');
    PERFORM pg_temp.check(r.user_id IS NULL, 'no password sign-in for an external user');
END $$;

-- The app role reaches users only through the functions.
SELECT pg_temp.expect_error($$INSERT INTO ferry.users (issuer, subject) VALUES ('i', 's')$$, '42501');

SELECT 'PASS 12_external_users';
