-- role: owner
-- Migration 0029: a JWT user's lookup name, kept by ferry.sign_in_external
-- only when it changed, and found by ferry.lookup_user (ASCII case aside)
-- unless two findable users answer to it; and ferry.record_user_uses.

DO $$
DECLARE a uuid; b uuid; place tid; r record;
BEGIN
    a := ferry.sign_in_external('https://idp-l', 'alice', '{}', 'Alice@Example.com')::uuid;
    PERFORM pg_temp.check((SELECT lookup_name FROM ferry.users WHERE id = a) = 'Alice@Example.com', 'kept on first sight');
    SELECT ctid INTO place FROM ferry.users WHERE id = a;
    PERFORM ferry.sign_in_external('https://idp-l', 'alice', '{}', 'Alice@Example.com');
    PERFORM pg_temp.check((SELECT ctid FROM ferry.users WHERE id = a) = place, 'an unchanged lookup name writes no new row version');
    SELECT * INTO r FROM ferry.lookup_user('alice@EXAMPLE.com');
    PERFORM pg_temp.check(r.id = a AND r.name = 'Alice@Example.com', 'found in another case, named as stored');
    PERFORM ferry.sign_in_external('https://idp-l', 'alice', '{}', 'alice@new.example');
    PERFORM pg_temp.check((SELECT ctid FROM ferry.users WHERE id = a) <> place, 'a changed one is written');
    SELECT * INTO r FROM ferry.lookup_user('alice@example.com');
    PERFORM pg_temp.check(r.id IS NULL AND r.retry_after_seconds IS NULL, 'the old one finds nobody');
    PERFORM ferry.sign_in_external('https://idp-l', 'alice', '{}', NULL);
    PERFORM pg_temp.check((SELECT lookup_name FROM ferry.users WHERE id = a) IS NULL, 'none given clears it');
    PERFORM ferry.sign_in_external('https://idp-l', 'alice', '{}', repeat('x', 321));
    PERFORM pg_temp.check((SELECT lookup_name FROM ferry.users WHERE id = a) IS NULL, 'past 320 bytes is none');
    PERFORM ferry.sign_in_external('https://idp-l', 'alice', '{}', 'Ä@example.com');
    PERFORM pg_temp.check((SELECT lookup_name FROM ferry.users WHERE id = a) IS NULL, 'outside the lookup''s shape is none');
    -- Two users with one lookup name: as nobody.
    PERFORM ferry.sign_in_external('https://idp-l', 'alice', '{}', 'same@example.com');
    b := ferry.sign_in_external('https://idp-m', 'bob', '{}', 'SAME@example.com')::uuid;
    SELECT * INTO r FROM ferry.lookup_user('same@example.com');
    PERFORM pg_temp.check(r.id IS NULL AND r.name IS NULL AND r.retry_after_seconds IS NULL, 'two matches answer as none');
    -- A disabled one is not findable, so the other is found.
    UPDATE ferry.users SET disabled_at = now() WHERE id = b;
    SELECT * INTO r FROM ferry.lookup_user('same@example.com');
    PERFORM pg_temp.check(r.id = a, 'a disabled user is no match');
    -- Uses move last_used_at forward only.
    PERFORM ferry.record_user_uses(jsonb_build_array(jsonb_build_object('user', a, 'at', 2000000000000)));
    PERFORM ferry.record_user_uses(jsonb_build_array(jsonb_build_object('user', a, 'at', 1000000000000)));
    PERFORM pg_temp.check((SELECT last_used_at FROM ferry.users WHERE id = a) = to_timestamp(2000000000), 'only forward');
END $$;

-- A Ferry user has no lookup name.
SELECT pg_temp.expect_error(
    $$INSERT INTO ferry.users (name, password_hash, lookup_name) VALUES ('pw', 'x', 'pw@example.com')$$, '23514');

SELECT 'PASS 16_lookup_names';
