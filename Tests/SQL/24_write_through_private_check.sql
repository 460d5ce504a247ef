-- role: app
-- A child of a granted table writes through its parent's private check (issue 47:
-- ferry.rules_apply_private_check), as the server's role sees it on the study app:
-- who may write a set's terms is who could before. The set's teacher T (its
-- creator) and collaborator C update and add terms; a student S who reads the set
-- through a class, a stranger X, and X reading it as a public set, update none
-- (0 rows) and add none (42501). The check admits for each caller only the sets
-- they may write.

CREATE FUNCTION pg_temp.affected(p_sql text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
    EXECUTE p_sql;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END $$;
CREATE FUNCTION pg_temp.act_as(p_who text) RETURNS void LANGUAGE sql AS $$
    SELECT set_config('privview.who', p_who, false), set_config('ferry.user_id', current_setting('privview.' || p_who), false);
$$;
CREATE FUNCTION pg_temp.id(p_what text) RETURNS uuid LANGUAGE sql AS $$
    SELECT current_setting('privview.' || p_what)::uuid;
$$;
-- What the caller may do to the set's term and the public set's term: "read update add" each as 0/1.
CREATE FUNCTION pg_temp.may(p_set text, p_term text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    v_read bigint := (SELECT count(*) FROM app.terms WHERE id = pg_temp.id(p_term));
    v_update bigint := pg_temp.affected(format($q$UPDATE app.terms SET word = 'by ' || %L WHERE id = %L$q$,
                                               current_setting('privview.who'), pg_temp.id(p_term)));
    v_add int := 1;
BEGIN
    BEGIN
        INSERT INTO app.terms (set_id, word) VALUES (pg_temp.id(p_set), 'added');
    EXCEPTION WHEN insufficient_privilege THEN v_add := 0;
    END;
    RETURN format('%s %s %s', v_read, v_update, v_add);
END $$;

SELECT set_config('privview.t', ferry.create_user('privview_t', 'pw')::text, false),
       set_config('privview.c', ferry.create_user('privview_c', 'pw')::text, false),
       set_config('privview.s', ferry.create_user('privview_s', 'pw')::text, false),
       set_config('privview.x', ferry.create_user('privview_x', 'pw')::text, false);

SELECT pg_temp.act_as('t');
WITH i AS (INSERT INTO app.study_sets (title) VALUES ('Linked') RETURNING id) SELECT set_config('privview.set', id::text, false) FROM i;
WITH i AS (INSERT INTO app.study_sets (title, is_public) VALUES ('Open', true) RETURNING id) SELECT set_config('privview.open', id::text, false) FROM i;
WITH i AS (INSERT INTO app.terms (set_id, word) VALUES (pg_temp.id('set'), 'w') RETURNING id) SELECT set_config('privview.term', id::text, false) FROM i;
WITH i AS (INSERT INTO app.terms (set_id, word) VALUES (pg_temp.id('open'), 'w') RETURNING id) SELECT set_config('privview.openterm', id::text, false) FROM i;
INSERT INTO app.set_collaborators (set_id, user_id) VALUES (pg_temp.id('set'), pg_temp.id('c'));
WITH i AS (INSERT INTO app.classes (name) VALUES ('5C') RETURNING id) SELECT set_config('privview.class', id::text, false) FROM i;
INSERT INTO app.class_members (class_id, user_id) VALUES (pg_temp.id('class'), pg_temp.id('s'));
INSERT INTO app.class_sets (class_id, set_id) VALUES (pg_temp.id('class'), pg_temp.id('set'));
SELECT pg_temp.act_as('s');
WITH i AS (INSERT INTO app.study_sets (title) VALUES ('Own') RETURNING id) SELECT set_config('privview.own', id::text, false) FROM i;
WITH i AS (INSERT INTO app.terms (set_id, word) VALUES (pg_temp.id('own'), 'w') RETURNING id) SELECT set_config('privview.ownterm', id::text, false) FROM i;

DO $do$
DECLARE
    v text;
BEGIN
    PERFORM pg_temp.check(position('_ferry_writes_study_sets' IN (SELECT pg_get_expr(p.polqual, p.polrelid) || pg_get_expr(p.polwithcheck, p.polrelid)
                                                                   FROM pg_policy p WHERE p.polrelid = 'app.terms'::regclass
                                                                    AND p.polname = 'ferry_rules_write')) > 0,
                          'the terms'' write policy calls the sets'' private check');

    PERFORM pg_temp.act_as('t');
    v := pg_temp.may('set', 'term');
    PERFORM pg_temp.check(v = '1 1 1', 'the creator reads, updates and adds terms: ' || v);
    PERFORM pg_temp.act_as('c');
    v := pg_temp.may('set', 'term');
    PERFORM pg_temp.check(v = '1 1 1', 'a collaborator too: ' || v);

    PERFORM pg_temp.act_as('s');
    v := pg_temp.may('set', 'term');
    PERFORM pg_temp.check(v = '1 0 0', 'a student reads the linked set''s terms, writes none: ' || v);
    v := pg_temp.may('own', 'ownterm');
    PERFORM pg_temp.check(v = '1 1 1', 'and writes their own set''s: ' || v);
    -- Nobody moves a term: the serve role may not write set_id (so the policy's WITH CHECK guards adding).
    PERFORM pg_temp.expect_error(format($$UPDATE app.terms SET set_id = %L WHERE id = %L$$, pg_temp.id('set'), pg_temp.id('ownterm')), '42501');

    PERFORM pg_temp.act_as('x');
    v := pg_temp.may('set', 'term');
    PERFORM pg_temp.check(v = '0 0 0', 'a stranger reads and writes nothing: ' || v);
    PERFORM set_config('ferry.public_reads', 'on', false);
    v := pg_temp.may('open', 'openterm');
    PERFORM pg_temp.check(v = '1 0 0', 'a public set''s terms are read, not written: ' || v);
    PERFORM set_config('ferry.public_reads', '', false);
END $do$;

-- The check itself, as each caller.
DO $do$ BEGIN
    PERFORM pg_temp.act_as('t');
    PERFORM pg_temp.check(app._ferry_writes_study_sets(pg_temp.id('set')) AND app._ferry_writes_study_sets(pg_temp.id('open')),
                          'the check admits the creator''s own sets');
    PERFORM pg_temp.act_as('c');
    PERFORM pg_temp.check(app._ferry_writes_study_sets(pg_temp.id('set')) AND NOT app._ferry_writes_study_sets(pg_temp.id('open')),
                          'the check admits for a collaborator the set they collaborate on, not the creator''s other');
    PERFORM pg_temp.act_as('s');
    PERFORM pg_temp.check(app._ferry_writes_study_sets(pg_temp.id('own')) AND NOT app._ferry_writes_study_sets(pg_temp.id('set')),
                          'the check admits for the student their own set, not the one a class lends them');
    PERFORM pg_temp.act_as('x');
    PERFORM pg_temp.check(NOT app._ferry_writes_study_sets(pg_temp.id('open')) AND NOT app._ferry_writes_study_sets(pg_temp.id('set')),
                          'the check admits nothing for a stranger');
END $do$;

SELECT 'PASS';
