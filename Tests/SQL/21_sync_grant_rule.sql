-- role: owner
-- Core 0033's ferry.sync_grant: bad input fails naming the table and column
-- and changes nothing; what it generates; drop_sync_rules refuses to drop a
-- table from under a grant, and removes a grant rule's own objects.

CREATE SCHEMA granttest;
CREATE TABLE granttest.sets (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), owner_id uuid NOT NULL REFERENCES ferry.users);
CREATE TABLE granttest.groups (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), owner_id uuid NOT NULL REFERENCES ferry.users);
CREATE TABLE granttest.lonely (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), owner_id uuid NOT NULL REFERENCES ferry.users);
CREATE TABLE granttest.group_members (id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
                                      group_id uuid NOT NULL REFERENCES granttest.groups, user_id uuid NOT NULL REFERENCES ferry.users);
CREATE TABLE granttest.links (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), group_id uuid NOT NULL REFERENCES granttest.groups,
                              lonely_id uuid REFERENCES granttest.lonely, set_id uuid NOT NULL REFERENCES granttest.sets,
                              loose uuid, note text);
SELECT ferry.sync_owned('granttest.sets');
SELECT ferry.sync_owned('granttest.groups');
SELECT ferry.sync_owned('granttest.lonely');
SELECT ferry.sync_members('granttest.group_members', scope => 'group_id');

-- Whether the members table's notify trigger names private members (ferry.sync_notify_source).
CREATE FUNCTION pg_temp.members_notify_private() RETURNS boolean LANGUAGE sql AS $$
    SELECT position('Private member rows' IN (SELECT t.tgfoid::regproc::text || p.prosrc FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid
                                               WHERE t.tgrelid = 'granttest.group_members'::regclass
                                                 AND t.tgname = 'zz_ferry_notify_insert')) > 0
$$;

DO $do$
DECLARE
    v_message text;
BEGIN
    PERFORM pg_temp.expect_error($$SELECT ferry.sync_grant('granttest.links', scope => 'nope', through => 'group_id')$$, '42703');
    PERFORM pg_temp.expect_error($$SELECT ferry.sync_grant('granttest.links', scope => 'loose', through => 'group_id')$$, '42830');
    PERFORM pg_temp.expect_error($$SELECT ferry.sync_grant('granttest.links', scope => 'set_id', through => 'set_id')$$, '22023');
    PERFORM pg_temp.expect_error($$SELECT ferry.sync_grant('granttest.links', scope => 'set_id', through => 'loose')$$, '42830');
    PERFORM pg_temp.expect_error($$SELECT ferry.sync_grant('granttest.links', scope => 'set_id', through => 'lonely_id')$$, '55000');
    PERFORM pg_temp.expect_error($$SELECT ferry.sync_grant('granttest.links', scope => 'group_id', through => 'group_id')$$, '22023');
    BEGIN
        PERFORM ferry.sync_grant('granttest.links', scope => 'set_id', through => 'lonely_id');
    EXCEPTION WHEN OTHERS THEN v_message := SQLERRM;
    END;
    PERFORM pg_temp.check(v_message = 'granttest.links.lonely_id (named as through) points at granttest.lonely, which no members rule shares: a grant reaches that table''s members',
                          'the refusal names the table, the column and the cause: ' || coalesce(v_message, 'none'));
    PERFORM pg_temp.check(NOT EXISTS (SELECT 1 FROM ferry.sync_rules WHERE table_oid = 'granttest.links'::regclass),
                          'a refused rule changes nothing');
END $do$;

SELECT pg_temp.check(NOT pg_temp.members_notify_private(), 'before a grant, members rows wake the group''s readers');
SELECT ferry.sync_grant('granttest.links', scope => 'set_id', through => 'group_id');
DO $do$
BEGIN
    PERFORM pg_temp.check((SELECT kind || ' ' || rule_column || ' ' || member_column FROM ferry.sync_rules
                            WHERE table_oid = 'granttest.links'::regclass) = 'grant set_id group_id', 'the rule is recorded');
    PERFORM pg_temp.check(to_regprocedure('granttest._ferry_scope_ids_links()') IS NOT NULL
                          AND has_function_privilege('ferry_app', 'granttest._ferry_scope_ids_links()', 'EXECUTE'),
                          'its scope-ids function exists, for the serve role');
    -- Every read and write policy of a scope's tables calls these functions. In SQL, a
    -- SECURITY DEFINER function is planned again in each statement (~0.2-0.4 ms; a public
    -- set's first page took twice as long); PL/pgSQL keeps the plan for the session.
    PERFORM pg_temp.check((SELECT count(*) FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
                            WHERE p.oid IN ('granttest._ferry_scope_ids_links()'::regprocedure,
                                            'granttest._ferry_scope_ids_group_members()'::regprocedure)
                              AND l.lanname = 'plpgsql') = 2,
                          'the scope-ids functions (grant and members) are PL/pgSQL, their plans kept');
    PERFORM pg_temp.check(position('granttest._ferry_scope_ids_links()' IN
                                   (SELECT pg_get_expr(p.polqual, p.polrelid) FROM pg_policy p
                                     WHERE p.polrelid = 'granttest.sets'::regclass AND p.polname = 'ferry_rules_read')) > 0
                          AND position('_ferry_scope_ids_links' IN
                                   (SELECT pg_get_expr(p.polqual, p.polrelid) FROM pg_policy p
                                     WHERE p.polrelid = 'granttest.sets'::regclass AND p.polname = 'ferry_rules_write')) = 0,
                          'the granted table reads through it, and writes without it');
    PERFORM pg_temp.check((SELECT array_agg(t.tgname::text ORDER BY t.tgname) FROM pg_trigger t
                            WHERE t.tgrelid = 'granttest.group_members'::regclass AND t.tgname LIKE 'zz_ferry_rules_%')
                          = ARRAY['zz_ferry_rules_grants', 'zz_ferry_rules_members'], 'the members table records grants through it');
    PERFORM pg_temp.check(EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgrelid = 'granttest.links'::regclass AND t.tgname = 'zz_ferry_rules_grant'),
                          'the grant table records its own');
    PERFORM pg_temp.check((SELECT through_name FROM ferry.read_paths('granttest') WHERE table_name = 'links') = 'groups'
                          AND (SELECT scope_ids_function FROM ferry.read_paths('granttest') WHERE table_name = 'links')
                              = 'granttest._ferry_scope_ids_links()', 'the read paths name what it reads through');
    PERFORM pg_temp.check(EXISTS (SELECT 1 FROM ferry.access_scopes WHERE scope_table = 'granttest.groups'::regclass
                                     AND member_table = 'granttest.links'::regclass AND read_through_scope),
                          'a grant row is a member of its through row''s scope');
    PERFORM pg_temp.check(ferry.refresh_sync_rules() > 0 AND (SELECT policies FROM ferry.sync_rules WHERE table_oid = 'granttest.sets'::regclass)
                          = ferry.rules_policies('granttest.sets'), 'a refresh is stable');
    PERFORM pg_temp.expect_error($$SELECT ferry.drop_sync_rules('granttest.sets')$$, '2BP01');
    PERFORM pg_temp.check(pg_temp.members_notify_private(), 'the members table''s rows now wake their member and owner only');
END $do$;

-- A child of the granted table writes through the table's private check (issue 47).
CREATE TABLE granttest.notes (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), set_id uuid NOT NULL REFERENCES granttest.sets, body text);
SELECT ferry.sync_child('granttest.notes', parent => 'set_id');
DO $do$
BEGIN
    PERFORM pg_temp.check(has_function_privilege('ferry_app', 'granttest._ferry_writes_sets(uuid)', 'EXECUTE')
                          AND position('_ferry_writes_sets' IN (SELECT pg_get_expr(p.polqual, p.polrelid) FROM pg_policy p
                                                                 WHERE p.polrelid = 'granttest.notes'::regclass AND p.polname = 'ferry_rules_write')) > 0,
                          'the child''s write policy calls the granted table''s private check, which the serve role may call');
END $do$;

SELECT ferry.drop_sync_rules('granttest.links');
DO $do$
BEGIN
    PERFORM pg_temp.check(to_regprocedure('granttest._ferry_writes_sets(uuid)') IS NULL
                          AND position('_ferry_writes_sets' IN (SELECT policies::text FROM ferry.sync_rules
                                                                 WHERE table_oid = 'granttest.notes'::regclass)) = 0,
                          'without the grant, the child writes through its parent''s policy again and the check is gone');
    PERFORM pg_temp.check(to_regprocedure('granttest._ferry_scope_ids_links()') IS NULL
                          AND NOT EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgrelid = 'granttest.links'::regclass AND t.tgname = 'zz_ferry_rules_grant')
                          AND position('_ferry_scope_ids_links' IN (SELECT policies::text FROM ferry.sync_rules
                                                                     WHERE table_oid = 'granttest.sets'::regclass)) = 0,
                          'dropping the rule removes its function, its trigger and its part of the granted table''s policy');
    PERFORM pg_temp.check(NOT pg_temp.members_notify_private(), 'and the members table''s rows wake the group''s readers again');
END $do$;

SELECT 'PASS';
