-- role: app
-- Users, passwords, throttling and tokens, through the functions the server
-- (connected as ferry_app) calls.

-- Runs a statement and checks that it fails with the given SQLSTATE.
-- Users.
SELECT set_config('authtest.alice', ferry.create_user('alice', 'correct horse')::text, false);
SELECT pg_temp.expect_error($$SELECT ferry.create_user('alice', 'other')$$, '23505');
SELECT pg_temp.expect_error($$SELECT ferry.create_user('bad name!', 'pw')$$, '23514');
SELECT pg_temp.expect_error($$SELECT ferry.create_user('', 'pw')$$, '23514');
SELECT pg_temp.expect_error($$SELECT ferry.create_user('bob', '')$$, '22023');
DO $$
BEGIN
    PERFORM pg_temp.check((SELECT id FROM ferry.user_by_name('alice')) = current_setting('authtest.alice')::uuid, 'user_by_name finds alice');
    PERFORM pg_temp.check(NOT EXISTS (SELECT 1 FROM ferry.user_by_name('nobody')), 'user_by_name: unknown is empty');
END $$;

-- The app role reaches users, tokens and login failures only through functions.
SELECT pg_temp.expect_error('SELECT * FROM ferry.users', '42501');
SELECT pg_temp.expect_error('SELECT * FROM ferry.tokens', '42501');
SELECT pg_temp.expect_error('SELECT * FROM ferry.login_failures', '42501');
SELECT pg_temp.expect_error($$UPDATE ferry.purge_horizon SET horizon_xid = '0'$$, '42501');
SELECT pg_temp.expect_error($$SELECT ferry.enable_sync('app.terms')$$, '42501');

-- Authentication: success, wrong password and unknown user look the same.
DO $$
DECLARE r record; alice uuid := current_setting('authtest.alice')::uuid;
BEGIN
    SELECT * INTO r FROM ferry.authenticate('alice', 'correct horse');
    PERFORM pg_temp.check(r.user_id = alice AND r.retry_after_ms = 0, 'correct password: (alice, 0)');
    SELECT * INTO r FROM ferry.authenticate('alice', 'wrong');
    PERFORM pg_temp.check(r.user_id IS NULL AND r.retry_after_ms = 0, 'wrong password: (null, 0)');
    SELECT * INTO r FROM ferry.authenticate('nobody', 'wrong');
    PERFORM pg_temp.check(r.user_id IS NULL AND r.retry_after_ms = 0, 'unknown user: (null, 0)');
    SELECT * INTO r FROM ferry.authenticate(repeat('x', 1000), 'wrong');
    PERFORM pg_temp.check(r.user_id IS NULL AND r.retry_after_ms = 0, 'absurd name: (null, 0)');
    SELECT * INTO r FROM ferry.authenticate('alice', NULL);
    PERFORM pg_temp.check(r.user_id IS NULL AND r.retry_after_ms = 0, 'null password: (null, 0)');
    -- One failure then a success resets the counter.
    SELECT * INTO r FROM ferry.authenticate('alice', 'correct horse');
    PERFORM pg_temp.check(r.user_id = alice, 'success after one failure');
END $$;

-- An unknown name costs a bcrypt like a known one (no timing oracle).
DO $$
DECLARE t0 timestamptz; known interval := '1 hour'; unknown interval := '1 hour';
BEGIN
    FOR i IN 1..3 LOOP
        t0 := clock_timestamp(); PERFORM ferry.authenticate('alice', 'correct horse'); known := least(known, clock_timestamp() - t0);
        t0 := clock_timestamp(); PERFORM ferry.authenticate('ghost_' || i, 'x'); unknown := least(unknown, clock_timestamp() - t0);
    END LOOP;
    RAISE NOTICE 'authenticate: known user % , unknown user %', known, unknown;
    PERFORM pg_temp.check(known > interval '10 ms', 'bcrypt is slow: ' || known);
    PERFORM pg_temp.check(unknown > known * 0.3, format('unknown (%s) costs about as much as known (%s)', unknown, known));
END $$;

-- Throttling: the 5th consecutive failure locks the name; while locked even
-- the right password is refused without being checked; the lock expires.
SELECT ferry.create_user('carol', 'carol pw');
DO $$
DECLARE r record;
BEGIN
    FOR i IN 1..5 LOOP
        SELECT * INTO r FROM ferry.authenticate('carol', 'bad ' || i);
        PERFORM pg_temp.check(r.user_id IS NULL AND r.retry_after_ms = 0, 'failure ' || i || ': (null, 0)');
    END LOOP;
    SELECT * INTO r FROM ferry.authenticate('carol', 'carol pw');
    PERFORM pg_temp.check(r.user_id IS NULL AND r.retry_after_ms > 0 AND r.retry_after_ms <= 1000,
                          'locked after 5 failures, correct password refused, retry in ' || r.retry_after_ms || ' ms');
END $$;
SELECT pg_sleep(1.1);
DO $$
DECLARE r record;
BEGIN
    -- Lock over: a 6th failure locks again, for twice as long.
    SELECT * INTO r FROM ferry.authenticate('carol', 'bad 6');
    PERFORM pg_temp.check(r.user_id IS NULL AND r.retry_after_ms = 0, 'failure 6: (null, 0)');
    SELECT * INTO r FROM ferry.authenticate('carol', 'carol pw');
    PERFORM pg_temp.check(r.user_id IS NULL AND r.retry_after_ms > 1000 AND r.retry_after_ms <= 2000,
                          'second lock doubles, retry in ' || r.retry_after_ms || ' ms');
END $$;
SELECT pg_sleep(2.1);
DO $$
DECLARE r record;
BEGIN
    SELECT * INTO r FROM ferry.authenticate('carol', 'carol pw');
    PERFORM pg_temp.check(r.user_id IS NOT NULL AND r.retry_after_ms = 0, 'after the lock the right password works');
    SELECT * INTO r FROM ferry.authenticate('carol', 'bad again');
    SELECT * INTO r FROM ferry.authenticate('carol', 'carol pw');
    PERFORM pg_temp.check(r.user_id IS NOT NULL, 'success reset the counter: one new failure does not lock');
END $$;
-- Unknown names are throttled the same way, so locking reveals nothing.
DO $$
DECLARE r record;
BEGIN
    FOR i IN 1..5 LOOP PERFORM ferry.authenticate('nobody_here', 'x'); END LOOP;
    SELECT * INTO r FROM ferry.authenticate('nobody_here', 'x');
    PERFORM pg_temp.check(r.user_id IS NULL AND r.retry_after_ms > 0, 'unknown names lock too');
END $$;

-- Tokens.
DO $$
DECLARE alice uuid := current_setting('authtest.alice')::uuid; exp timestamptz;
BEGIN
    exp := ferry.issue_token(alice, sha256('token-live'), 3600);
    PERFORM pg_temp.check(exp BETWEEN now() + interval '59 minutes' AND now() + interval '61 minutes', 'issue_token returns expires_at');
    PERFORM ferry.issue_token(alice, sha256('token-revoked'), 3600);
    PERFORM ferry.issue_token(alice, sha256('token-expiring'), 1);
END $$;
SELECT pg_temp.expect_error($$SELECT ferry.issue_token(ferry.current_user_id(), sha256('x'), 0)$$, '22023');
SELECT pg_temp.expect_error($$SELECT ferry.issue_token(current_setting('authtest.alice')::uuid, 'short', 60)$$, '23514');
SELECT pg_temp.expect_error($$SELECT ferry.issue_token(gen_random_uuid(), sha256('nouser'), 60)$$, '23503');

-- The token check Ferry sends at the start of every request whose token it has
-- not checked lately (the text is Database.tokenCheck's): one statement over
-- ferry.live_tokens (0009; 0010 dropped ferry.begin_request, which did the same
-- inside a function; 0012 added the expiry). It answers "<user id> <expiry ms>";
-- token_check returns the user id, token_check_text all of it.
CREATE FUNCTION pg_temp.token_check_text(p_hash bytea) RETURNS text LANGUAGE plpgsql AS $$
DECLARE v text;
BEGIN
    EXECUTE $q$SELECT COALESCE((SELECT pg_catalog.set_config('ferry.user_id', v.user_id::pg_catalog.text, true)
              || ' ' || floor(extract(epoch FROM v.expires_at) * 1000)::pg_catalog.int8::pg_catalog.text
              FROM ferry.live_tokens v WHERE v.token_hash = $1::pg_catalog.bytea), ferry.invalid_token())$q$
       INTO v USING p_hash;
    RETURN v;
END $$;
CREATE FUNCTION pg_temp.token_check(p_hash bytea) RETURNS text LANGUAGE sql AS $$
    SELECT split_part(pg_temp.token_check_text(p_hash), ' ', 1);
$$;
-- The error the server maps to 401: FR401 'invalid token'.
CREATE FUNCTION pg_temp.expect_invalid_token(p_hash bytea, p_what text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE msg text;
BEGIN
    PERFORM pg_temp.token_check(p_hash);
    RAISE EXCEPTION 'expected FR401 for %', p_what;
EXCEPTION WHEN SQLSTATE 'FR401' THEN
    GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT;
    PERFORM pg_temp.check(msg = 'invalid token', 'FR401 message is "invalid token" for ' || p_what);
END $$;

DO $$
DECLARE alice uuid := current_setting('authtest.alice')::uuid; me record;
BEGIN
    PERFORM pg_temp.check(ferry.current_user_id() IS NULL, 'no user before the token check');
    PERFORM pg_temp.check(pg_temp.token_check(sha256('token-live')) = alice::text, 'token check returns the token''s user');
    PERFORM pg_temp.check(current_setting('ferry.user_id') = alice::text, 'token check sets ferry.user_id');
    PERFORM pg_temp.check(split_part(pg_temp.token_check_text(sha256('token-live')), ' ', 2)::bigint
                          = (SELECT floor(extract(epoch FROM expires_at) * 1000)::bigint FROM ferry.live_tokens
                              WHERE token_hash = sha256('token-live')),
                          'token check returns the token''s expiry in ms after the user id');
    PERFORM pg_temp.check(ferry.current_user_id() = alice, 'current_user_id() is alice');
    SELECT * INTO me FROM ferry.me();
    PERFORM pg_temp.check(me.id = alice AND me.name = 'alice' AND me.created_at > 1000000000000, 'me() returns alice with ms created_at');
END $$;
DO $$
BEGIN
    PERFORM pg_temp.check(ferry.current_user_id() IS NULL, 'ferry.user_id is transaction-local');
    PERFORM pg_temp.check(NOT EXISTS (SELECT 1 FROM ferry.me()), 'me() is empty without a user');
END $$;

SELECT pg_temp.expect_invalid_token(sha256('never issued'), 'a token never issued');
SELECT pg_temp.expect_invalid_token(NULL, 'no token');
DO $$
BEGIN
    PERFORM pg_temp.check(ferry.revoke_token(sha256('token-revoked')), 'revoke_token: true for a live token');
    PERFORM pg_temp.check(NOT ferry.revoke_token(sha256('token-revoked')), 'revoke_token: false the second time');
    PERFORM pg_temp.check(NOT ferry.revoke_token(sha256('never issued')), 'revoke_token: false for an unknown token');
END $$;
SELECT pg_temp.expect_invalid_token(sha256('token-revoked'), 'a revoked token');
SELECT pg_sleep(1.1);
SELECT pg_temp.expect_invalid_token(sha256('token-expiring'), 'an expired token');
SELECT pg_temp.check(pg_temp.token_check(sha256('token-live')) IS NOT NULL, 'the live token still works');

-- What the app role sees: live tokens only, read-only; ferry.tokens stays closed.
SELECT pg_temp.check((SELECT count(*) FROM ferry.live_tokens WHERE token_hash = sha256('token-live')) = 1, 'live_tokens lists a live token');
SELECT pg_temp.check(NOT EXISTS (SELECT 1 FROM ferry.live_tokens
                                 WHERE token_hash IN (sha256('token-revoked'), sha256('token-expiring'))),
                     'live_tokens leaves out revoked and expired tokens');
SELECT pg_temp.expect_error($$SELECT 1 FROM ferry.tokens$$, '42501');
SELECT pg_temp.expect_error($$DELETE FROM ferry.live_tokens$$, '42501');
SELECT pg_temp.expect_error($$UPDATE ferry.live_tokens SET user_id = user_id$$, '42501');
SELECT pg_temp.check(to_regprocedure('ferry.begin_request(bytea)') IS NULL, 'ferry.begin_request is gone (0010)');

-- The view's body was bound when it was created: a temporary "tokens" or
-- "live_tokens" first on the caller's search_path is never read.
CREATE TEMP TABLE tokens (token_hash bytea, user_id uuid, revoked boolean, expires_at timestamptz);
INSERT INTO pg_temp.tokens VALUES (sha256('forged'), gen_random_uuid(), false, now() + interval '1 hour');
CREATE TEMP TABLE live_tokens (token_hash bytea, user_id uuid);
INSERT INTO pg_temp.live_tokens VALUES (sha256('forged'), gen_random_uuid());
SET search_path = pg_temp, public, pg_catalog;
SELECT pg_temp.expect_invalid_token(sha256('forged'), 'a forged token under a hostile search_path');
SELECT pg_temp.check(pg_temp.token_check(sha256('token-live')) = current_setting('authtest.alice'),
                     'the token check under a hostile search_path still reads ferry.tokens');
RESET search_path;
DROP TABLE pg_temp.tokens, pg_temp.live_tokens;

SELECT 'PASS 03_auth';
