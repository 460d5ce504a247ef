-- 0004_study_access_scope.sql: the study app's access scope for the changes feed.
--
-- Applied by `ferry migrate` as the OWNER role, in one transaction, after
-- Ferry's own 0004_changes.sql (ferry.access_scopes, ferry.record_access_grant
-- and ferry.record_access_revocation; docs/changes-feed.md). Until Ferry's
-- schema and the app's were split into two tracks, these lines were the end of
-- that file; a database migrated then has them recorded under this name.

-- ---------------------------------------------------------------------------
-- The example app: a set's access covers the set, its terms and its
-- collaborator rows; access is granted and lost through set_collaborators.
-- (A creator's access never changes: creator_id is fixed at creation.)
-- folder_sets rows are readable by the folder's owner whatever the set's
-- access, so they are not members.
-- ---------------------------------------------------------------------------

INSERT INTO ferry.access_scopes (scope_table, member_table, member_column) VALUES
    ('app.study_sets', 'app.study_sets', 'id'),
    ('app.study_sets', 'app.terms', 'set_id'),
    ('app.study_sets', 'app.set_collaborators', 'set_id');

-- AFTER INSERT OR UPDATE on set_collaborators. A live row grants its user the
-- set; a row that stops being live (soft delete), or whose user or set is
-- changed by an owner, revokes. SECURITY DEFINER: the recording functions are
-- not for the serve role to call directly.
CREATE FUNCTION app.set_collaborators_access_changed() RETURNS trigger
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, app, pg_temp
AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND NOT OLD.is_deleted
       AND (NEW.is_deleted OR NEW.user_id IS DISTINCT FROM OLD.user_id OR NEW.set_id IS DISTINCT FROM OLD.set_id) THEN
        PERFORM ferry.record_access_revocation(OLD.user_id, 'app.study_sets', OLD.set_id::text);
    END IF;
    IF NOT NEW.is_deleted
       AND (TG_OP = 'INSERT' OR OLD.is_deleted
            OR NEW.user_id IS DISTINCT FROM OLD.user_id OR NEW.set_id IS DISTINCT FROM OLD.set_id) THEN
        PERFORM ferry.record_access_grant(NEW.user_id, 'app.study_sets', NEW.set_id::text);
    END IF;
    RETURN NULL;
END
$$;
REVOKE EXECUTE ON FUNCTION app.set_collaborators_access_changed() FROM PUBLIC;

CREATE TRIGGER set_collaborators_access_changed
    AFTER INSERT OR UPDATE ON app.set_collaborators
    FOR EACH ROW EXECUTE FUNCTION app.set_collaborators_access_changed();
