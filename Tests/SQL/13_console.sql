-- role: app
-- Migration 0018, as the serve role sees it: the operators' tables are out of
-- reach, the console's functions open only to a live operator token (never a
-- user's), sign-in mints a token only with the password, and every synced
-- row remembers its last writer.

-- No direct way to the operators, their tokens, the audit log or the refusals.
SELECT pg_temp.expect_error('SELECT * FROM ferry.operators', '42501');
SELECT pg_temp.expect_error('SELECT * FROM ferry.operator_tokens', '42501');
SELECT pg_temp.expect_error('SELECT * FROM ferry.operator_audit', '42501');
SELECT pg_temp.expect_error($$DELETE FROM ferry.operator_audit$$, '42501');
SELECT pg_temp.expect_error('SELECT * FROM ferry.refused_requests', '42501');
SELECT pg_temp.expect_error($$SELECT ferry.create_operator('eve', 'eve-password', 'admin')$$, '42501');
SELECT pg_temp.expect_error(
    $$SELECT ferry.issue_operator_token(gen_random_uuid(), sha256('x'), 60)$$, '42501');

-- A user and their token, as the server would make them.
SELECT set_config('consoletest.user', ferry.create_user('una', 'una-password')::text, false);
SELECT ferry.issue_token(current_setting('consoletest.user')::uuid, sha256('user-token'), 3600);

-- Every console function refuses a user's token hash, and a made-up one, with FR401.
DO $$
DECLARE
    v_hash text;
    v_call text;
BEGIN
    FOREACH v_hash IN ARRAY ARRAY[encode(sha256('user-token'), 'hex'), encode(sha256('nothing'), 'hex')] LOOP
        FOREACH v_call IN ARRAY ARRAY[
            'SELECT * FROM ferry.operator_session(%1$s)',
            'SELECT * FROM ferry.console_users(%1$s, '''', 10)',
            'SELECT * FROM ferry.console_user_tokens(%1$s, %2$L)',
            'SELECT ferry.console_revoke_token(%1$s, %2$L, ''0011223344556677'')',
            'SELECT * FROM ferry.console_refusals(%1$s, %2$L, 10)',
            'SELECT ferry.console_act_as(%1$s, %2$L)',
            'SELECT * FROM ferry.console_table_stats(%1$s)',
            'SELECT * FROM ferry.console_rows(%1$s, ''app.terms'', ''{}'', ''any'', NULL, false, 10)',
            'SELECT ferry.console_rows_by_id(%1$s, ''app.terms'', ARRAY[]::uuid[])',
            'SELECT ferry.console_row(%1$s, ''app.terms'', %2$L)',
            'SELECT * FROM ferry.console_oldest_transactions(%1$s)',
            'SELECT * FROM ferry.console_audit_log(%1$s, 10)',
            'SELECT ferry.console_audit(%1$s, ''x'', ''{}'', NULL, NULL)',
            'SELECT ferry.operator_sign_out(%1$s)'
        ] LOOP
            PERFORM pg_temp.expect_error(
                format(v_call, format('decode(%L, ''hex'')', v_hash), current_setting('consoletest.user')), 'FR401');
        END LOOP;
    END LOOP;
    -- The token is still live and unrevoked.
    PERFORM pg_temp.check((SELECT count(*) FROM ferry.live_tokens WHERE token_hash = sha256('user-token')) = 1,
                          'no console call revoked the user''s token');
END $$;

-- Sign-in without the password mints nothing.
DO $$
DECLARE r record;
BEGIN
    SELECT * INTO r FROM ferry.operator_sign_in('nobody', 'guess-guess', sha256('op-token'), 60);
    PERFORM pg_temp.check(r.operator_id IS NULL AND r.retry_after_ms = 0, 'unknown operator: nothing');
    PERFORM pg_temp.expect_error(format('SELECT * FROM ferry.operator_session(%L::bytea)', sha256('op-token')), 'FR401');
END $$;

-- The last writer: the user whose request wrote the row, none for a writer that is no user.
DO $$
DECLARE v_set uuid;
BEGIN
    PERFORM set_config('ferry.user_id', current_setting('consoletest.user'), true);
    INSERT INTO app.study_sets (title) VALUES ('written by una') RETURNING id INTO v_set;
    PERFORM pg_temp.check((SELECT _ferry_writer FROM app.study_sets WHERE id = v_set) = current_setting('consoletest.user')::uuid,
                          'an insert records its writer');
    UPDATE app.study_sets SET title = 'again' WHERE id = v_set;
    PERFORM pg_temp.check((SELECT _ferry_writer FROM app.study_sets WHERE id = v_set) = current_setting('consoletest.user')::uuid,
                          'an update records its writer');
    PERFORM pg_temp.check(
        NOT EXISTS (SELECT 1 FROM ferry.sync_resources s
                     WHERE NOT EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = s.table_oid AND a.attname = '_ferry_writer')),
        'every synced table has the writer column: ' || (SELECT string_agg(s.table_oid::text, ', ') FROM ferry.sync_resources s
                     WHERE NOT EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = s.table_oid AND a.attname = '_ferry_writer')));
END $$;

SELECT 'PASS 13_console';
