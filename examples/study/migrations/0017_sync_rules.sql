-- 0017_sync_rules.sql: the study app on Ferry's declarative sync rules.
--
-- Applied by `ferry migrate` as the OWNER role, in one transaction, after
-- Ferry's own migrations (its 0019_sync_rules.sql provides the rules).
--
-- Until now this app's access rules were written by hand: policies per table
-- (0002, 0005, 0013), SECURITY DEFINER helpers so that policies do not
-- recurse, the grants, the access scope and the trigger that records access
-- granted and revoked (0004), the trigger that deletes a set's or folder's
-- children (0014). Each table now states its rule in one call, and Ferry
-- generates all of that from it. Who may do what is unchanged (examples/study/
-- README.md), and so are the rows: a rule applies to a table as it is.
--
-- The hand-written pieces go first: the rules write every policy of a table,
-- and refuse a table that has policies of its own.

DROP POLICY study_sets_read ON app.study_sets;
DROP POLICY study_sets_create ON app.study_sets;
DROP POLICY study_sets_write ON app.study_sets;
DROP POLICY terms_by_set_access ON app.terms;
DROP POLICY folders_owner ON app.folders;
DROP POLICY folder_sets_read ON app.folder_sets;
DROP POLICY folder_sets_create ON app.folder_sets;
DROP POLICY folder_sets_write ON app.folder_sets;
DROP POLICY set_collaborators_read ON app.set_collaborators;
DROP POLICY set_collaborators_create ON app.set_collaborators;
DROP POLICY set_collaborators_write ON app.set_collaborators;

DROP TRIGGER set_collaborators_access_changed ON app.set_collaborators;
DROP FUNCTION app.set_collaborators_access_changed();
DROP TRIGGER study_sets_tombstone_children ON app.study_sets;
DROP TRIGGER folders_tombstone_children ON app.folders;
DROP FUNCTION app.tombstone_children();
DROP FUNCTION app.collaborator_set_ids(), app.accessible_set_ids(), app.created_set_ids(),
              app.collaborator_set_id_array();

-- A set belongs to its creator; its collaborators read and write it too.
SELECT ferry.sync_owned('app.study_sets', owner => 'creator_id');
-- A live collaborator row shares its set with its user; the set's creator adds and removes them.
SELECT ferry.sync_members('app.set_collaborators', scope => 'set_id', member => 'user_id');
-- A term is readable and writable by whoever can read its set, and is deleted with it.
SELECT ferry.sync_child('app.terms', parent => 'set_id');
-- A folder is its owner's alone.
SELECT ferry.sync_owned('app.folders', owner => 'owner_id');
-- A folder's link to a set: the folder's owner's, pointing only at a set they can read when
-- written, and deleted with the folder or the set.
SELECT ferry.sync_child('app.folder_sets', parent => 'folder_id', links => ARRAY['set_id']);
