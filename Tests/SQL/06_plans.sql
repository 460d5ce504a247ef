-- role: owner
-- The hot lookups are single index scans: the token check that starts every
-- request, and the changes feed's walk in (_ferry_xid, id) order.

CREATE FUNCTION pg_temp.plan(p_sql text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE line text; plan text := '';
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || p_sql LOOP
        plan := plan || line || E'\n';
    END LOOP;
    RETURN plan;
END $$;

-- Enough rows that a sequential scan would not be chosen by accident.
DO $$
DECLARE u uuid; s uuid;
BEGIN
    u := ferry.create_user('plans_user', 'pw');
    FOR i IN 1..2000 LOOP
        PERFORM ferry.issue_token(u, sha256(convert_to('plan token ' || i, 'UTF8')), 3600);
    END LOOP;
    INSERT INTO app.study_sets (creator_id, title) VALUES (u, 'plans') RETURNING id INTO s;
    INSERT INTO app.terms (set_id, word) SELECT s, 'w' || g FROM generate_series(1, 5000) g;
END $$;
ANALYZE ferry.tokens;
ANALYZE app.terms;

DO $$
DECLARE p text;
BEGIN
    -- The lookup in the per-request token check (Database.tokenCheck), through ferry.live_tokens.
    p := pg_temp.plan($q$SELECT v.user_id FROM ferry.live_tokens v WHERE v.token_hash = sha256('plan token 7')$q$);
    RAISE NOTICE E'token check lookup:\n%', p;
    PERFORM pg_temp.check(p LIKE 'Index Scan using tokens_pkey%', 'token lookup is a primary-key index scan: ' || p);

    -- One page of the changes feed after a cursor.
    p := pg_temp.plan($q$SELECT * FROM app.terms
                          WHERE (_ferry_xid, id) > ('5'::xid8, '00000000-0000-0000-0000-000000000000'::uuid)
                            AND _ferry_xid < pg_snapshot_xmin(pg_current_snapshot())
                          ORDER BY _ferry_xid, id LIMIT 100$q$);
    RAISE NOTICE E'changes page:\n%', p;
    PERFORM pg_temp.check(p LIKE '%Index Scan using terms_ferry_xid_idx%', 'changes page walks (_ferry_xid, id): ' || p);
END $$;

-- The token check end to end, timed (one PK lookup plus set_config).
DO $$
DECLARE t0 timestamptz := clock_timestamp(); v text;
BEGIN
    FOR i IN 1..1000 LOOP
        SELECT COALESCE((SELECT pg_catalog.set_config('ferry.user_id', lt.user_id::pg_catalog.text, true)
                           FROM ferry.live_tokens lt
                          WHERE lt.token_hash = sha256(convert_to('plan token ' || (i % 2000 + 1), 'UTF8'))),
                        ferry.invalid_token()) INTO v;
    END LOOP;
    RAISE NOTICE 'token check: % ms per call', round(extract(epoch FROM clock_timestamp() - t0) * 1000 / 1000, 4);
END $$;

SELECT 'PASS 06_plans';
