-- 0005_terms_policy.sql: the terms policy checks the row's own set, not every set.
--
-- Applied by `ferry migrate` as the OWNER role, in one transaction.
--
-- 0002 wrote the policy as `set_id IN (SELECT app.accessible_set_ids())`: an
-- uncorrelated subquery that PostgreSQL runs once per statement into a hash.
-- That costs one row per set the caller can reach, on EVERY statement, even a
-- primary-key read of one term: for a user with 1,000 sets, EXPLAIN ANALYZE
-- shows the 1,000-row SECURITY DEFINER function (each row through
-- fmgr_security_definer and its search_path GUC switch) and its hash taking
-- ~2.4 ms of a 2.5 ms read, and bench/api.sh measured ~580 GET/s.
--
-- The same rule, correlated: the row's set must be visible to the caller. The
-- study_sets read policy is exactly "creator, or a live collaborator"
-- (app.collaborator_set_ids() is SECURITY DEFINER, so nothing recurses), the
-- same sets app.accessible_set_ids() returns. PostgreSQL now picks per query:
-- one study_sets primary-key probe per row for a read by id (0.03 ms), or a
-- hash of the visible sets when many rows are scanned. WITH CHECK sees the
-- same policy (a subquery in a policy is subject to the SELECT policies).
--
-- app.accessible_set_ids() stays: other policies still use it.

DROP POLICY terms_by_set_access ON app.terms;
CREATE POLICY terms_by_set_access ON app.terms
    USING (EXISTS (SELECT 1 FROM app.study_sets s WHERE s.id = terms.set_id))
    WITH CHECK (EXISTS (SELECT 1 FROM app.study_sets s WHERE s.id = terms.set_id));
