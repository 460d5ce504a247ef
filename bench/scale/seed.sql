-- bench/scale: :terms terms in sets of 10 spread over many users, a "big" user
-- who owns :big of them (the same at every size, so its snapshot figure
-- compares like with like), a "huge" user who owns :huge (100,000 at the
-- largest size, else none), a reader with two sets of 100 terms, and a
-- collaborator who owns nothing and is shared 20 other users' sets (issue 34's
-- measure: a collaborator of 20 sets among everyone's rows).
-- Run as the owner role with psql -v terms=N -v big=M -v huge=K.
SELECT ferry.create_user('reader', 'bench'), ferry.create_user('big', 'bench'), ferry.create_user('huge', 'bench');
INSERT INTO ferry.users (name, password_hash)
SELECT 'user' || u, (SELECT password_hash FROM ferry.users WHERE name = 'reader')
  FROM generate_series(1, greatest(1, (:terms - :big - :huge) / 10000)) u;
-- Other users' sets of 10 terms, round robin over the users.
WITH others AS (SELECT id, row_number() OVER (ORDER BY name) - 1 AS n, count(*) OVER () AS c FROM ferry.users WHERE name LIKE 'user%')
INSERT INTO app.study_sets (creator_id, title)
SELECT o.id, 'set ' || s FROM generate_series(1, greatest(1, (:terms - :big - :huge) / 10)) s JOIN others o ON o.n = s % o.c;
INSERT INTO app.study_sets (creator_id, title)
SELECT (SELECT id FROM ferry.users WHERE name = 'big'), 'big ' || s FROM generate_series(1, :big / 100) s;
INSERT INTO app.study_sets (creator_id, title)
SELECT (SELECT id FROM ferry.users WHERE name = 'huge'), 'big ' || s FROM generate_series(1, :huge / 100) s;
INSERT INTO app.terms (set_id, word, definition, rank)
SELECT s.id, 'word ' || i, 'a definition of some length for row ' || i, 'r' || lpad(i::text, 3, '0') || 'V'
  FROM app.study_sets s CROSS JOIN generate_series(1, 10) i WHERE s.title LIKE 'set %';
INSERT INTO app.terms (set_id, word, definition, rank)
SELECT s.id, 'word ' || i, 'a definition', 'r' || lpad(i::text, 3, '0') || 'V'
  FROM app.study_sets s CROSS JOIN generate_series(1, 100) i WHERE s.title LIKE 'big %';
INSERT INTO app.study_sets (creator_id, title)
SELECT (SELECT id FROM ferry.users WHERE name = 'reader'), t FROM unnest(ARRAY['reader read', 'reader write']) t;
INSERT INTO app.terms (set_id, word, definition, rank)
SELECT s.id, 'word ' || i, 'd', 'r' || lpad(i::text, 3, '0') || 'V'
  FROM app.study_sets s CROSS JOIN generate_series(1, 100) i WHERE s.title LIKE 'reader %';
SELECT ferry.create_user('collaborator', 'bench');
INSERT INTO app.set_collaborators (set_id, user_id)
SELECT s.id, (SELECT id FROM ferry.users WHERE name = 'collaborator')
  FROM app.study_sets s WHERE s.title LIKE 'set %' ORDER BY s.id DESC LIMIT 20;
ANALYZE app.terms, app.study_sets, app.set_collaborators, ferry.users;
