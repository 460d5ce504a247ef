-- 0013_indexable_set_policy.sql: the study_sets read policy as conditions an
-- index can answer, so that "the sets this caller can read" costs what the
-- caller can read, not what the table holds.
--
-- Applied by `ferry migrate` as the OWNER role, in one transaction, after 0012.
--
-- 0002 wrote the policy as `creator_id = me OR id IN (SELECT
-- app.collaborator_set_ids())`. The IN over a set-returning function is a
-- hashed subplan that no index can take, so every statement that needs "the
-- readable sets" scanned the whole of study_sets and filtered it row by row.
-- The terms policy (0005) asks exactly that whenever a statement reads many
-- terms, the changes feed's pages among them: at 228k terms the sequential scan
-- of study_sets ran on every sync page of every user, and grew with everyone's
-- sets (issue 25, ChangesCostTests).
--
-- Now the collaborations are one array, read once per statement (a scalar
-- subquery is an InitPlan), and `id = ANY (that array)` is an index condition
-- on the primary key beside `creator_id = me` on study_sets_creator_id_idx: a
-- BitmapOr of the two, whatever the table's size. The rule is unchanged: the
-- creator, or a live collaborator.
CREATE FUNCTION app.collaborator_set_id_array() RETURNS uuid[]
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, app, pg_temp
AS $$
    SELECT coalesce(array_agg(c.set_id), '{}') FROM app.set_collaborators c
     WHERE c.user_id = ferry.current_user_id() AND NOT c.is_deleted;
$$;
REVOKE EXECUTE ON FUNCTION app.collaborator_set_id_array() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION app.collaborator_set_id_array() TO ferry_app;

DROP POLICY study_sets_read ON app.study_sets;
CREATE POLICY study_sets_read ON app.study_sets FOR SELECT
    USING (creator_id = ferry.current_user_id() OR id = ANY ((SELECT app.collaborator_set_id_array())::uuid[]));
DROP POLICY study_sets_write ON app.study_sets;
CREATE POLICY study_sets_write ON app.study_sets FOR UPDATE
    USING (creator_id = ferry.current_user_id() OR id = ANY ((SELECT app.collaborator_set_id_array())::uuid[]))
    WITH CHECK (creator_id = ferry.current_user_id() OR id = ANY ((SELECT app.collaborator_set_id_array())::uuid[]));
