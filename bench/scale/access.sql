-- bench/scale: inside the reader's feed window, 100 grants (collaborations on
-- other users' sets) and 100 revocations (collaborations added, then removed).
INSERT INTO app.set_collaborators (set_id, user_id)
SELECT s.id, (SELECT id FROM ferry.users WHERE name = 'reader')
  FROM app.study_sets s WHERE s.title LIKE 'set %' ORDER BY s.id LIMIT 200;
UPDATE app.set_collaborators c SET is_deleted = true
  FROM (SELECT c2.id FROM app.set_collaborators c2 WHERE c2.user_id = (SELECT id FROM ferry.users WHERE name = 'reader')
         ORDER BY c2.set_id DESC LIMIT 100) r WHERE c.id = r.id;
ANALYZE app.set_collaborators;
