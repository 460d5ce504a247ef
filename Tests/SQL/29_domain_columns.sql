-- role: owner
-- Columns typed with a domain: ferry.base_type follows a domain over a domain to
-- its base type and typmod; ferry.constraint_columns names the columns of a
-- domain's CHECK (its error names no table nor column); the generated update
-- trigger compares a domain over text or integer as text, as it does its base
-- type, and a domain over json through to_jsonb; the console's filter reads a
-- value as the base type, not cut to a varchar's length; a scope column typed
-- with a domain over uuid is plain (its rows hinted by the update trigger).

CREATE DOMAIN app.dom_label AS text CHECK (char_length(VALUE) BETWEEN 1 AND 20);
CREATE DOMAIN app.dom_points AS integer CONSTRAINT dom_points_not_negative CHECK (VALUE >= 0);
CREATE DOMAIN app.dom_bonus AS app.dom_points CONSTRAINT dom_bonus_small CHECK (VALUE < 100);
CREATE DOMAIN app.dom_code AS character varying(8);
CREATE DOMAIN app.dom_doc AS json;
CREATE TABLE app.dom_cards (id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
                            label app.dom_label NOT NULL DEFAULT 'card',
                            points app.dom_points NOT NULL DEFAULT 0,
                            bonus app.dom_bonus,
                            code app.dom_code,
                            doc app.dom_doc);
SELECT ferry.enable_sync('app.dom_cards');

SELECT pg_temp.check((SELECT b.base_type = 'int4'::regtype AND b.base_typmod = -1 FROM ferry.base_type('app.dom_bonus'::regtype, -1) b),
                     'a domain over a domain over integer: integer');
SELECT pg_temp.check((SELECT format_type(b.base_type, b.base_typmod) = 'character varying(8)' FROM ferry.base_type('app.dom_code'::regtype, -1) b),
                     'a domain over varchar(8): its typmod kept');
SELECT pg_temp.check((SELECT b.base_type = 'uuid'::regtype AND b.base_typmod = -1 FROM ferry.base_type('uuid'::regtype, -1) b),
                     'any other type: itself');

SELECT pg_temp.check(ferry.constraint_columns('app.dom_cards', 'dom_points_not_negative') = '["points", "bonus"]'::jsonb,
                     'a domain''s CHECK: the columns of the domain and of a domain over it');
SELECT pg_temp.check(ferry.constraint_columns('app.dom_cards', 'dom_bonus_small') = '["bonus"]'::jsonb,
                     'the outer domain''s CHECK: its columns only');
SELECT pg_temp.check(ferry.constraint_columns('app.dom_cards', 'dom_cards_pkey') = '["id"]'::jsonb,
                     'a table''s own constraint as before');
SELECT pg_temp.check(ferry.constraint_columns('app.dom_cards', 'no_such_check') = '[]'::jsonb, 'no such constraint: none');

SELECT pg_temp.check((SELECT p.prosrc LIKE '%NEW.label::pg_catalog.text COLLATE%' AND p.prosrc LIKE '%NEW.points::pg_catalog.text COLLATE%'
                             AND p.prosrc LIKE '%NEW.code::pg_catalog.text COLLATE%' AND p.prosrc LIKE '%pg_catalog.to_jsonb(NEW.doc)%'
                        FROM pg_proc p WHERE p.proname = 'sync_update_' || 'app.dom_cards'::regclass::oid),
                     'the update trigger compares domains over text, integer and varchar as text, over json through to_jsonb');

DO $$
DECLARE
    c uuid;
    r jsonb;
BEGIN
    INSERT INTO app.dom_cards (label, points, doc) VALUES ('a', 1, '{"a": 1}') RETURNING id INTO c;
    UPDATE app.dom_cards SET label = 'b', doc = '{"a": 1}' WHERE id = c;
    SELECT _ferry_field_revisions INTO r FROM app.dom_cards WHERE id = c;
    PERFORM pg_temp.check(r = '{"label": 2}'::jsonb, 'the changed domain field has the new revision, the same json none: ' || r::text);
    UPDATE app.dom_cards SET points = 2, doc = '{"a": 2}' WHERE id = c;
    SELECT _ferry_field_revisions INTO r FROM app.dom_cards WHERE id = c;
    PERFORM pg_temp.check(r = '{"label": 2, "points": 3, "doc": 3}'::jsonb, 'an integer domain and a json domain: ' || r::text);
    UPDATE app.dom_cards SET code = 'ABCDEFGH' WHERE id = c;
    PERFORM pg_temp.check(ferry.console_condition('app.dom_cards', '{"code": "ABCDEFGHIJ"}', 'any') LIKE '%AS character varying)%',
                          'a console filter on a varchar domain: read as varchar, not cut to 8: '
                          || ferry.console_condition('app.dom_cards', '{"code": "ABCDEFGHIJ"}', 'any'));
    PERFORM pg_temp.check(ferry.console_condition('app.dom_cards', '{"points": "-5"}', 'any') LIKE '%AS integer)%',
                          'a console filter on an integer domain: read as integer');
END $$;

-- A scope column typed with a domain over uuid is plain too: the update trigger hints its rows
-- and Ferry marks its own (a row mark function), as for a uuid.
CREATE DOMAIN app.dom_set_ref AS uuid;
CREATE TABLE app.dom_notes (id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
                            set_id app.dom_set_ref NOT NULL REFERENCES app.study_sets ON DELETE CASCADE,
                            body text NOT NULL DEFAULT '');
SELECT ferry.sync_child('app.dom_notes', parent => 'set_id');
SELECT pg_temp.check((SELECT bool_and(c.plain) AND count(*) = 1 FROM ferry.sync_scope_columns('app.dom_notes') c),
                     'a domain over uuid is a plain scope column');
SELECT pg_temp.check(ferry.sync_hints_rows('app.dom_notes'), 'its rows are hinted by the update trigger');
SELECT pg_temp.check(to_regproc('ferry.sync_mark_' || 'app.dom_notes'::regclass::oid) IS NOT NULL, 'it has a row mark function');

DROP TABLE app.dom_notes;
DROP DOMAIN app.dom_set_ref;
DROP TABLE app.dom_cards;
DROP DOMAIN app.dom_bonus, app.dom_points, app.dom_label, app.dom_code, app.dom_doc;

SELECT 'PASS 29_domain_columns';
