-- 0015_read_through_scope.sql: Index of a member table drives from the scope
-- rows the caller can read.
--
-- Applied by `ferry migrate` as the OWNER role, in one transaction, after 0014.
--
-- The terms policy (0005) is a per-row EXISTS on the row's set: nothing an
-- index can drive. An Index of terms without a set_id filter therefore read
-- every term in the database and kept the caller's: page 1 of a 5,000-row
-- snapshot took 156 ms at a million terms against 8.3 ms at ten thousand
-- (issue 25). Ferry cannot read that rule out of a policy, so the app states
-- it here: with read_through_scope, a member row is readable only while its
-- scope row is, and Index adds `member_column = ANY (the caller's scope ids)`
-- to its filters, a condition RLS would impose anyway that lets PostgreSQL
-- walk the member's index from each readable scope row.
--
-- Not for a member the caller may read another way: a user's own
-- set_collaborators row (and its tombstone) stays readable after the set is
-- not, so that member keeps the default (false).

ALTER TABLE ferry.access_scopes ADD COLUMN read_through_scope boolean NOT NULL DEFAULT false;
COMMENT ON COLUMN ferry.access_scopes.read_through_scope IS
    'A member row is readable only while its scope row is readable; Index reads members through the readable scope rows.';
