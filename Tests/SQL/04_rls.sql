-- role: app
-- Row Level Security of the example app, as the server's role sees it.
-- A owns a set, terms and a folder; B is a stranger, then a collaborator,
-- then removed again.

-- Rows changed by a statement.
CREATE FUNCTION pg_temp.affected(p_sql text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
    EXECUTE p_sql;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END $$;

CREATE FUNCTION pg_temp.explain(p_sql text) RETURNS SETOF text LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE 'EXPLAIN (COSTS OFF) ' || p_sql;
END $$;

-- Acts as a user for the rest of the session (the server does it per transaction).
CREATE FUNCTION pg_temp.act_as(p_who text) RETURNS void LANGUAGE sql AS $$
    SELECT set_config('ferry.user_id', current_setting('rlstest.' || p_who), false);
$$;
CREATE FUNCTION pg_temp.id(p_what text) RETURNS uuid LANGUAGE sql AS $$
    SELECT current_setting('rlstest.' || p_what)::uuid;
$$;

SELECT set_config('rlstest.a', ferry.create_user('rls_a', 'pw')::text, false),
       set_config('rlstest.b', ferry.create_user('rls_b', 'pw')::text, false),
       set_config('rlstest.c', ferry.create_user('rls_c', 'pw')::text, false);

-- Without a user, nothing is visible and nothing can be created.
DO $do$
BEGIN
    PERFORM pg_temp.check((SELECT count(*) FROM app.study_sets) = 0, 'anonymous sees no sets');
END $do$;
SELECT pg_temp.expect_error($$INSERT INTO app.study_sets (title) VALUES ('anon')$$, '42501');

-- A creates a set with terms, a folder holding it; RETURNING sees the new rows.
SELECT pg_temp.act_as('a');
DO $do$
DECLARE s uuid; t1 uuid; t2 uuid; f uuid; fs uuid; r app.study_sets;
BEGIN
    INSERT INTO app.study_sets (title) VALUES ('A''s set') RETURNING * INTO r;
    s := r.id;
    PERFORM pg_temp.check(r.creator_id = pg_temp.id('a'), 'creator_id defaults to the current user');
    PERFORM pg_temp.check(r.revision = 1, 'RETURNING shows the sync columns');
    INSERT INTO app.terms (set_id, word, rank) VALUES (s, 'one', 'a') RETURNING id INTO t1;
    INSERT INTO app.terms (set_id, word, rank) VALUES (s, 'two', 'b') RETURNING id INTO t2;
    INSERT INTO app.folders (name) VALUES ('A''s folder') RETURNING id INTO f;
    INSERT INTO app.folder_sets (folder_id, set_id) VALUES (f, s) RETURNING id INTO fs;
    PERFORM set_config('rlstest.set_a', s::text, false);
    PERFORM set_config('rlstest.term1', t1::text, false);
    PERFORM set_config('rlstest.term2', t2::text, false);
    PERFORM set_config('rlstest.folder_a', f::text, false);
    PERFORM set_config('rlstest.link_a', fs::text, false);
    PERFORM pg_temp.check((SELECT count(*) FROM app.terms WHERE set_id = s) = 2, 'A sees her terms');
END $do$;
-- A may not create a set in someone else's name.
SELECT pg_temp.expect_error(format($$INSERT INTO app.study_sets (creator_id, title) VALUES (%L, 'x')$$, pg_temp.id('b')), '42501');
-- The live pair is unique.
SELECT pg_temp.expect_error(format($$INSERT INTO app.folder_sets (folder_id, set_id) VALUES (%L, %L)$$,
                                   pg_temp.id('folder_a'), pg_temp.id('set_a')), '23505');

-- B is a stranger: sees nothing, changes nothing.
SELECT pg_temp.act_as('b');
DO $do$
BEGIN
    PERFORM pg_temp.check((SELECT count(*) FROM app.study_sets) = 0, 'B sees none of A''s sets');
    PERFORM pg_temp.check((SELECT count(*) FROM app.terms) = 0, 'B sees none of A''s terms');
    PERFORM pg_temp.check((SELECT count(*) FROM app.terms WHERE id = pg_temp.id('term1')) = 0, 'B cannot read A''s term by id');
    PERFORM pg_temp.check((SELECT count(*) FROM app.folders) = 0, 'B sees none of A''s folders');
    PERFORM pg_temp.check((SELECT count(*) FROM app.folder_sets) = 0, 'B sees none of A''s folder links');
    PERFORM pg_temp.check((SELECT count(*) FROM app.set_collaborators) = 0, 'B sees no collaborators');
    PERFORM pg_temp.check(pg_temp.affected(format($$UPDATE app.study_sets SET title = 'pwned' WHERE id = %L$$, pg_temp.id('set_a'))) = 0,
                          'B cannot update A''s set');
    PERFORM pg_temp.check(pg_temp.affected(format($$UPDATE app.terms SET word = 'pwned' WHERE id = %L$$, pg_temp.id('term1'))) = 0,
                          'B cannot update A''s term');
    PERFORM pg_temp.check(pg_temp.affected(format($$UPDATE app.terms SET is_deleted = true WHERE set_id = %L$$, pg_temp.id('set_a'))) = 0,
                          'B cannot delete A''s terms');
    PERFORM pg_temp.check(pg_temp.affected(format($$UPDATE app.folders SET name = 'pwned' WHERE id = %L$$, pg_temp.id('folder_a'))) = 0,
                          'B cannot rename A''s folder');
END $do$;
SELECT pg_temp.expect_error(format($$INSERT INTO app.terms (set_id, word) VALUES (%L, 'intruder')$$, pg_temp.id('set_a')), '42501');
SELECT pg_temp.expect_error(format($$INSERT INTO app.set_collaborators (set_id, user_id) VALUES (%L, %L)$$,
                                   pg_temp.id('set_a'), pg_temp.id('b')), '42501');
SELECT pg_temp.expect_error(format($$INSERT INTO app.folder_sets (folder_id, set_id) VALUES (%L, %L)$$,
                                   pg_temp.id('folder_a'), pg_temp.id('set_a')), '42501');
-- B's own folder may not point at A's set.
DO $do$
DECLARE f uuid; s uuid;
BEGIN
    INSERT INTO app.folders (name) VALUES ('B''s folder') RETURNING id INTO f;
    INSERT INTO app.study_sets (title) VALUES ('B''s set') RETURNING id INTO s;
    PERFORM set_config('rlstest.folder_b', f::text, false);
    PERFORM set_config('rlstest.set_b', s::text, false);
END $do$;
SELECT pg_temp.expect_error(format($$INSERT INTO app.folder_sets (folder_id, set_id) VALUES (%L, %L)$$,
                                   pg_temp.id('folder_b'), pg_temp.id('set_a')), '42501');
-- Nor point A's folder at B's set.
SELECT pg_temp.expect_error(format($$INSERT INTO app.folder_sets (folder_id, set_id) VALUES (%L, %L)$$,
                                   pg_temp.id('folder_a'), pg_temp.id('set_b')), '42501');
-- Column privileges: ownership and bookkeeping are not writable, nothing is deletable.
SELECT pg_temp.expect_error(format($$UPDATE app.study_sets SET creator_id = %L WHERE id = %L$$, pg_temp.id('b'), pg_temp.id('set_b')), '42501');
SELECT pg_temp.expect_error(format($$UPDATE app.study_sets SET revision = 99 WHERE id = %L$$, pg_temp.id('set_b')), '42501');
SELECT pg_temp.expect_error(format($$UPDATE app.study_sets SET last_modified = 0 WHERE id = %L$$, pg_temp.id('set_b')), '42501');
SELECT pg_temp.expect_error(format($$UPDATE app.study_sets SET _ferry_field_revisions = '{}' WHERE id = %L$$, pg_temp.id('set_b')), '42501');
SELECT pg_temp.expect_error(format($$UPDATE app.folders SET owner_id = %L WHERE id = %L$$, pg_temp.id('a'), pg_temp.id('folder_b')), '42501');
SELECT pg_temp.expect_error(format($$DELETE FROM app.study_sets WHERE id = %L$$, pg_temp.id('set_b')), '42501');
SELECT pg_temp.expect_error('DELETE FROM app.terms', '42501');
SELECT pg_temp.expect_error('TRUNCATE app.terms', '42501');
SELECT pg_temp.expect_error($$INSERT INTO app.study_sets (title, revision) VALUES ('x', 5)$$, '42501');
SELECT pg_temp.expect_error($$INSERT INTO app.study_sets (title, is_deleted) VALUES ('x', true)$$, '42501');

-- A adds B as a collaborator.
SELECT pg_temp.act_as('a');
DO $do$
DECLARE c uuid;
BEGIN
    INSERT INTO app.set_collaborators (set_id, user_id) VALUES (pg_temp.id('set_a'), pg_temp.id('b')) RETURNING id INTO c;
    PERFORM set_config('rlstest.collab_b', c::text, false);
END $do$;

-- B now sees and edits the set and its terms, but does not own it.
SELECT pg_temp.act_as('b');
DO $do$
DECLARE t3 uuid;
BEGIN
    PERFORM pg_temp.check((SELECT count(*) FROM app.study_sets WHERE id = pg_temp.id('set_a')) = 1, 'collaborator B sees A''s set');
    PERFORM pg_temp.check((SELECT count(*) FROM app.terms WHERE set_id = pg_temp.id('set_a')) = 2, 'collaborator B sees its terms');
    PERFORM pg_temp.check((SELECT count(*) FROM app.set_collaborators WHERE set_id = pg_temp.id('set_a')) = 1,
                          'collaborator B sees the collaborator rows of the set');
    PERFORM pg_temp.check((SELECT count(*) FROM app.folders) = 1, 'B still sees only his own folder');
    PERFORM pg_temp.check(pg_temp.affected(format($$UPDATE app.terms SET word = 'uno' WHERE id = %L$$, pg_temp.id('term1'))) = 1,
                          'collaborator B edits a term');
    PERFORM pg_temp.check(pg_temp.affected(format($$UPDATE app.study_sets SET description = 'by B' WHERE id = %L$$, pg_temp.id('set_a'))) = 1,
                          'collaborator B edits the set');
    INSERT INTO app.terms (set_id, word, rank) VALUES (pg_temp.id('set_a'), 'three', 'c') RETURNING id INTO t3;
    PERFORM set_config('rlstest.term3', t3::text, false);
    PERFORM pg_temp.check(pg_temp.affected(format($$UPDATE app.set_collaborators SET is_deleted = true WHERE id = %L$$, pg_temp.id('collab_b'))) = 0,
                          'collaborator B cannot remove collaborators');
    INSERT INTO app.folder_sets (folder_id, set_id) VALUES (pg_temp.id('folder_b'), pg_temp.id('set_a'));
END $do$;
SELECT pg_temp.expect_error(format($$INSERT INTO app.set_collaborators (set_id, user_id) VALUES (%L, %L)$$,
                                   pg_temp.id('set_a'), pg_temp.id('c')), '42501');
SELECT pg_temp.expect_error(format($$UPDATE app.study_sets SET creator_id = %L WHERE id = %L$$, pg_temp.id('b'), pg_temp.id('set_a')), '42501');

-- A soft-deletes a term: everyone with access still reads the tombstone.
SELECT pg_temp.act_as('a');
DO $do$
BEGIN
    PERFORM pg_temp.check(pg_temp.affected(format($$UPDATE app.terms SET is_deleted = true WHERE id = %L$$, pg_temp.id('term2'))) = 1,
                          'A deletes a term');
    PERFORM pg_temp.check((SELECT word FROM app.terms WHERE id = pg_temp.id('term1')) = 'uno', 'A sees B''s edit');
    PERFORM pg_temp.check((SELECT count(*) FROM app.terms WHERE set_id = pg_temp.id('set_a')) = 3, 'A sees B''s new term');
    PERFORM pg_temp.check((SELECT count(*) FROM app.folder_sets) = 1, 'A does not see B''s folder link');
END $do$;
SELECT pg_temp.act_as('b');
DO $do$
BEGIN
    PERFORM pg_temp.check((SELECT is_deleted FROM app.terms WHERE id = pg_temp.id('term2')), 'B reads the tombstone');
END $do$;

-- A removes B (soft delete of the collaborator row): B sees nothing of A's again.
SELECT pg_temp.act_as('a');
SELECT pg_temp.check(pg_temp.affected(format($$UPDATE app.set_collaborators SET is_deleted = true WHERE id = %L$$, pg_temp.id('collab_b'))) = 1,
                     'A removes B');
SELECT pg_temp.act_as('b');
DO $do$
BEGIN
    PERFORM pg_temp.check((SELECT count(*) FROM app.study_sets WHERE id = pg_temp.id('set_a')) = 0, 'removed B no longer sees the set');
    PERFORM pg_temp.check((SELECT count(*) FROM app.terms WHERE set_id = pg_temp.id('set_a')) = 0, 'removed B no longer sees the terms');
    PERFORM pg_temp.check((SELECT count(*) FROM app.set_collaborators) = 1, 'removed B sees only his own collaborator row');
    PERFORM pg_temp.check((SELECT is_deleted FROM app.set_collaborators WHERE id = pg_temp.id('collab_b')),
                          'and it is a tombstone: that is how B learns of the removal');
    PERFORM pg_temp.check(pg_temp.affected(format($$UPDATE app.terms SET word = 'late' WHERE id = %L$$, pg_temp.id('term3'))) = 0,
                          'removed B cannot edit the term he created');
    -- His folder link to the set stays his: visible, and removable, but not re-addable.
    PERFORM pg_temp.check((SELECT count(*) FROM app.folder_sets WHERE set_id = pg_temp.id('set_a')) = 1, 'B still sees his dangling link');
    PERFORM pg_temp.check(pg_temp.affected(format($$UPDATE app.folder_sets SET is_deleted = true WHERE set_id = %L$$, pg_temp.id('set_a'))) = 1,
                          'B removes his dangling link');
END $do$;
SELECT pg_temp.expect_error(format($$INSERT INTO app.folder_sets (folder_id, set_id) VALUES (%L, %L)$$,
                                   pg_temp.id('folder_b'), pg_temp.id('set_a')), '42501');

-- A adds B again: a new live pair is allowed next to the tombstone; a second live one is not.
SELECT pg_temp.act_as('a');
INSERT INTO app.set_collaborators (set_id, user_id) VALUES (pg_temp.id('set_a'), pg_temp.id('b'));
SELECT pg_temp.expect_error(format($$INSERT INTO app.set_collaborators (set_id, user_id) VALUES (%L, %L)$$,
                                   pg_temp.id('set_a'), pg_temp.id('b')), '23505');
SELECT pg_temp.act_as('b');
SELECT pg_temp.check((SELECT count(*) FROM app.terms WHERE set_id = pg_temp.id('set_a')) = 3, 're-added B sees the terms again');
SELECT pg_temp.act_as('c');
SELECT pg_temp.check((SELECT count(*) FROM app.set_collaborators) = 0, 'C sees nobody''s collaborator rows');
SELECT pg_temp.check((SELECT count(*) FROM app.study_sets) = 0, 'C sees no sets');

-- Folder links likewise: remove, then add the same pair again.
SELECT pg_temp.act_as('a');
SELECT pg_temp.check(pg_temp.affected(format($$UPDATE app.folder_sets SET is_deleted = true WHERE id = %L$$, pg_temp.id('link_a'))) = 1,
                     'A removes her folder link');
INSERT INTO app.folder_sets (folder_id, set_id) VALUES (pg_temp.id('folder_a'), pg_temp.id('set_a'));
SELECT pg_temp.check((SELECT count(*) FROM app.folder_sets WHERE folder_id = pg_temp.id('folder_a')) = 2, 'tombstone and live link side by side');

-- Idempotency keys: each user reaches only their own.
SELECT pg_temp.act_as('a');
INSERT INTO ferry.idempotency_keys (key, request_hash) VALUES ('k1', sha256('req'));
SELECT pg_temp.check((SELECT user_id FROM ferry.idempotency_keys WHERE key = 'k1') = pg_temp.id('a'), 'A''s key defaults to A');
SELECT pg_temp.act_as('b');
SELECT pg_temp.check((SELECT count(*) FROM ferry.idempotency_keys) = 0, 'B cannot see A''s idempotency key');
SELECT pg_temp.check(pg_temp.affected($$UPDATE ferry.idempotency_keys SET status = 200 WHERE key = 'k1'$$) = 0, 'B cannot complete A''s key');
SELECT pg_temp.expect_error(format($$INSERT INTO ferry.idempotency_keys (user_id, key, request_hash) VALUES (%L, 'k2', '\x00')$$,
                                   pg_temp.id('a')), '42501');
INSERT INTO ferry.idempotency_keys (key, request_hash) VALUES ('k1', sha256('other'));

-- Plans: a term lookup by id stays a primary-key index scan, and the access
-- check calls no function per row: the set is one primary-key probe, and the
-- caller's collaborations are read once per statement (an InitPlan, 0013).
SELECT pg_temp.act_as('a');
INSERT INTO app.terms (set_id, word) SELECT pg_temp.id('set_a'), 'bulk ' || g FROM generate_series(1, 3000) g;
DO $do$
DECLARE plan text; t0 timestamptz; ms numeric;
BEGIN
    SELECT string_agg(line, E'\n') INTO plan
      FROM (SELECT * FROM pg_temp.explain(format('SELECT * FROM app.terms WHERE id = %L', pg_temp.id('term1')))) p(line);
    RAISE NOTICE E'term by id:\n%', plan;
    PERFORM pg_temp.check(plan LIKE '%Index Scan using terms_pkey on terms%', 'term by id uses terms_pkey: ' || plan);
    PERFORM pg_temp.check(plan LIKE '%InitPlan%' AND plan NOT LIKE '%Seq Scan%',
                          'access check reads the collaborations once and scans nothing whole: ' || plan);

    -- On these few rows a bitmap scan and a sort is as cheap as the ordered
    -- index (since core 0021 another index leads with set_id, the feed's
    -- (set_id, _ferry_xid, id)); with sorting priced out, what is checked is
    -- that an index gives the order.
    PERFORM set_config('enable_sort', 'off', true);
    SELECT string_agg(line, E'\n') INTO plan
      FROM (SELECT * FROM pg_temp.explain(format('SELECT * FROM app.terms WHERE set_id = %L ORDER BY rank, id LIMIT 100', pg_temp.id('set_a')))) p(line);
    PERFORM set_config('enable_sort', 'on', true);
    RAISE NOTICE E'terms of a set:\n%', plan;
    PERFORM pg_temp.check(plan LIKE '%Index%terms_set_rank_idx%', 'terms of a set use (set_id, rank, id): ' || plan);

    SELECT string_agg(line, E'\n') INTO plan
      FROM (SELECT * FROM pg_temp.explain(format('SELECT * FROM app.study_sets WHERE id = %L', pg_temp.id('set_a')))) p(line);
    PERFORM pg_temp.check(plan LIKE '%Index Scan using study_sets_pkey%', 'set by id uses study_sets_pkey: ' || plan);

    t0 := clock_timestamp();
    FOR i IN 1..200 LOOP
        PERFORM * FROM app.terms WHERE id = pg_temp.id('term1');
    END LOOP;
    ms := extract(epoch FROM clock_timestamp() - t0) * 1000 / 200;
    RAISE NOTICE 'term by id under RLS: % ms per lookup', round(ms, 3);
END $do$;

SELECT 'PASS 04_rls';
