-- role: app
-- Core 0033's grant rule on the study app's classes (examples/study 0020), as
-- the server's role sees it: a teacher T links a private set to a class; a
-- student S in the class reads the set and its terms, not its collaborator
-- rows, and writes none of them; S reads their own member row, not student
-- P's, and T reads both; a stranger X reads nothing. Removing S, or
-- unlinking, logs revocations of what S read (never of a collaborator row or
-- of P's member row); adding and linking log grants.

CREATE FUNCTION pg_temp.affected(p_sql text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
    EXECUTE p_sql;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END $$;
CREATE FUNCTION pg_temp.act_as(p_who text) RETURNS void LANGUAGE sql AS $$
    SELECT set_config('ferry.user_id', current_setting('granttest.' || p_who), false);
$$;
CREATE FUNCTION pg_temp.id(p_what text) RETURNS uuid LANGUAGE sql AS $$
    SELECT current_setting('granttest.' || p_what)::uuid;
$$;

SELECT set_config('granttest.t', ferry.create_user('grant_t', 'pw')::text, false),
       set_config('granttest.s', ferry.create_user('grant_s', 'pw')::text, false),
       set_config('granttest.c', ferry.create_user('grant_c', 'pw')::text, false),
       set_config('granttest.x', ferry.create_user('grant_x', 'pw')::text, false),
       set_config('granttest.p', ferry.create_user('grant_p', 'pw')::text, false);

SELECT pg_temp.act_as('t');
WITH i AS (INSERT INTO app.study_sets (title) VALUES ('Verbs') RETURNING id) SELECT set_config('granttest.set', id::text, false) FROM i;
WITH i AS (INSERT INTO app.study_sets (title) VALUES ('Other') RETURNING id) SELECT set_config('granttest.other', id::text, false) FROM i;
WITH i AS (INSERT INTO app.terms (set_id, word) VALUES (pg_temp.id('set'), 'w') RETURNING id) SELECT set_config('granttest.term', id::text, false) FROM i;
INSERT INTO app.set_collaborators (set_id, user_id) VALUES (pg_temp.id('set'), pg_temp.id('c'));
WITH i AS (INSERT INTO app.classes (name) VALUES ('4B') RETURNING id) SELECT set_config('granttest.class', id::text, false) FROM i;
WITH i AS (INSERT INTO app.class_members (class_id, user_id)
                                       VALUES (pg_temp.id('class'), pg_temp.id('s')) RETURNING id) SELECT set_config('granttest.member', id::text, false) FROM i;
INSERT INTO app.class_members (class_id, user_id) VALUES (pg_temp.id('class'), pg_temp.id('p'));
DO $do$ BEGIN
    PERFORM pg_temp.check((SELECT count(*) FROM app.class_members) = 2, 'the teacher reads every member row');
END $do$;

-- Before the link: the student reads the class, not the set.
SELECT pg_temp.act_as('s');
DO $do$ BEGIN
    PERFORM pg_temp.check((SELECT count(*) FROM app.classes) = 1, 'the student reads their class');
    PERFORM pg_temp.check((SELECT count(*) FROM app.study_sets) = 0, 'no set before a link');
    PERFORM pg_temp.check((SELECT array_agg(id) FROM app.class_members) = ARRAY[pg_temp.id('member')],
                          'the student reads their own member row, not a classmate''s');
END $do$;

-- A student may not link (nor may the teacher link a set that is not theirs).
SELECT pg_temp.expect_error(format($$INSERT INTO app.class_sets (class_id, set_id) VALUES (%L, %L)$$,
                                   pg_temp.id('class'), pg_temp.id('set')), '42501');
SELECT pg_temp.act_as('c');
WITH i AS (INSERT INTO app.study_sets (title) VALUES ('Mine') RETURNING id) SELECT set_config('granttest.cset', id::text, false) FROM i;
SELECT pg_temp.act_as('t');
SELECT pg_temp.expect_error(format($$INSERT INTO app.class_sets (class_id, set_id) VALUES (%L, %L)$$,
                                   pg_temp.id('class'), pg_temp.id('cset')), '42501');

WITH i AS (INSERT INTO app.class_sets (class_id, set_id)
                                     VALUES (pg_temp.id('class'), pg_temp.id('set')) RETURNING id) SELECT set_config('granttest.link', id::text, false) FROM i;

SELECT pg_temp.act_as('s');
DO $do$ BEGIN
    PERFORM pg_temp.check((SELECT array_agg(title) FROM app.study_sets) = ARRAY['Verbs'], 'the student reads the linked set only');
    PERFORM pg_temp.check((SELECT count(*) FROM app.terms) = 1, 'and its terms');
    PERFORM pg_temp.check((SELECT count(*) FROM app.class_sets) = 1, 'and the link');
    PERFORM pg_temp.check((SELECT count(*) FROM app.set_collaborators) = 0, 'not who collaborates on it');
    PERFORM pg_temp.check((SELECT count(*) FROM ferry.access_grants WHERE scope_table = 'app.study_sets'::regclass
                             AND scope_id = pg_temp.id('set')::text) = 1, 'linking logged the student''s grant of the set');
    PERFORM pg_temp.check(pg_temp.affected(format($$UPDATE app.study_sets SET title = 'mine' WHERE id = %L$$, pg_temp.id('set'))) = 0,
                          'reading is not writing the set');
    PERFORM pg_temp.check(pg_temp.affected(format($$UPDATE app.terms SET word = 'mine' WHERE id = %L$$, pg_temp.id('term'))) = 0,
                          'nor its terms');
    PERFORM pg_temp.check(pg_temp.affected(format($$UPDATE app.class_sets SET is_deleted = true WHERE id = %L$$, pg_temp.id('link'))) = 0,
                          'nor the link');
END $do$;
SELECT pg_temp.expect_error(format($$INSERT INTO app.terms (set_id, word) VALUES (%L, 'x')$$, pg_temp.id('set')), '42501');

SELECT pg_temp.act_as('x');
DO $do$ BEGIN
    PERFORM pg_temp.check((SELECT count(*) FROM app.study_sets) + (SELECT count(*) FROM app.terms)
                          + (SELECT count(*) FROM app.class_sets) + (SELECT count(*) FROM app.classes) = 0,
                          'a stranger reads nothing of it');
END $do$;

-- The collaborator still writes the set's terms (their path is not a grant's).
SELECT pg_temp.act_as('c');
DO $do$ BEGIN
    PERFORM pg_temp.check(pg_temp.affected(format($$UPDATE app.terms SET word = 'edited' WHERE id = %L$$, pg_temp.id('term'))) = 1,
                          'a collaborator writes the terms as before');
END $do$;

-- Removing the student from the class revokes the set's rows.
SELECT pg_temp.act_as('t');
UPDATE app.class_members SET is_deleted = true WHERE id = pg_temp.id('member');
SELECT pg_temp.act_as('s');
DO $do$ BEGIN
    PERFORM pg_temp.check((SELECT count(*) FROM app.study_sets) = 0, 'a removed student reads the set no more');
    PERFORM pg_temp.check((SELECT array_agg(DISTINCT table_oid::text ORDER BY table_oid::text) FROM ferry.access_revocations
                             WHERE scope_table = 'app.study_sets'::regclass AND scope_id = pg_temp.id('set')::text)
                          @> ARRAY['app.study_sets', 'app.terms'], 'removal logged the set''s and its terms'' revocations');
    PERFORM pg_temp.check(NOT EXISTS (SELECT 1 FROM ferry.access_revocations
                                       WHERE table_oid IN ('app.set_collaborators'::regclass, 'app.class_members'::regclass)),
                          'and none of a collaborator row, nor of a member row the student never read');
    PERFORM pg_temp.check((SELECT array_agg(DISTINCT table_oid::text ORDER BY table_oid::text) FROM ferry.access_revocations
                             WHERE scope_table = 'app.classes'::regclass)
                          = ARRAY['app.class_sets', 'app.classes'], 'the class and its links are revoked');
END $do$;

-- Back in the class: granted again; unlinking revokes; the link's tombstone stays readable.
SELECT pg_temp.act_as('t');
INSERT INTO app.class_members (class_id, user_id) VALUES (pg_temp.id('class'), pg_temp.id('s'));
SELECT pg_temp.act_as('s');
DO $do$ BEGIN
    PERFORM pg_temp.check((SELECT count(*) FROM app.study_sets) = 1, 'a student added again reads the set');
    PERFORM pg_temp.check((SELECT count(*) FROM ferry.access_grants WHERE scope_table = 'app.study_sets'::regclass) = 2,
                          'joining logged the grant of the class''s set');
END $do$;
SELECT pg_temp.act_as('t');
UPDATE app.class_sets SET is_deleted = true WHERE id = pg_temp.id('link');
SELECT pg_temp.act_as('s');
DO $do$ BEGIN
    PERFORM pg_temp.check((SELECT count(*) FROM app.study_sets) = 0, 'an unlinked set is not read');
    PERFORM pg_temp.check((SELECT count(*) FROM app.class_sets WHERE is_deleted) = 1, 'the link''s tombstone is');
    PERFORM pg_temp.check((SELECT count(DISTINCT xid) FROM ferry.access_revocations
                            WHERE scope_table = 'app.study_sets'::regclass AND table_oid = 'app.study_sets'::regclass) = 2,
                          'unlinking logged a revocation');
    PERFORM pg_temp.check(NOT EXISTS (SELECT 1 FROM ferry.access_revocations WHERE table_oid = 'app.set_collaborators'::regclass),
                          'of the set''s rows the student read, not of its collaborator row');
END $do$;

-- Deleting the class deletes its links.
SELECT pg_temp.act_as('t');
INSERT INTO app.class_sets (class_id, set_id) VALUES (pg_temp.id('class'), pg_temp.id('other'));
UPDATE app.classes SET is_deleted = true WHERE id = pg_temp.id('class');
DO $do$ BEGIN
    PERFORM pg_temp.check((SELECT bool_and(is_deleted) FROM app.class_sets), 'a class''s links are deleted with it');
END $do$;
SELECT pg_temp.act_as('s');
DO $do$ BEGIN
    PERFORM pg_temp.check((SELECT count(*) FROM app.study_sets) = 0, 'a deleted class grants nothing');
END $do$;

SELECT 'PASS';
