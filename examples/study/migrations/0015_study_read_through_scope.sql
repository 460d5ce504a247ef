-- 0015_study_read_through_scope.sql: a term is readable only while its set is.
--
-- Applied by `ferry migrate` as the OWNER role, in one transaction, after
-- Ferry's own 0015_read_through_scope.sql, which says what read_through_scope
-- means (Index of terms then drives from the sets the caller can read). Until
-- Ferry's schema and the app's were split into two tracks, this statement was
-- the end of that file; a database migrated then has it recorded under this
-- name.

UPDATE ferry.access_scopes SET read_through_scope = true
 WHERE scope_table = 'app.study_sets'::regclass AND member_table = 'app.terms'::regclass;
