-- 0014_children_follow_parent.sql: deleting a set or a folder deletes what
-- hangs off it, through the feed.
--
-- Applied by `ferry migrate` as the OWNER role, in one transaction, after 0013.
--
-- Before this, a soft-deleted set kept its terms live: visible to every
-- collaborator, editable, and still growing when another device, offline
-- when the set was deleted, came back with new terms (issue 21). Now:
-- - the set's tombstone tombstones its terms and the folder links to it, and a
--   folder's tombstone its links, in the same transaction; each child gets its
--   own revision and reaches every reader through the changes feed;
-- - a write that would put a live row under a tombstone (a new term in the
--   deleted set, a link to it) is refused by Ferry's reference check: 422,
--   the parent's field, reason `parent_deleted` (Sources/Ferry/Plan/ReferenceCheck.swift).
-- Edits of the children themselves then meet their tombstones: 410 `gone`.
--
-- SECURITY DEFINER: whoever may delete the set deletes all of it, including
-- links in other users' folders, which their RLS would not let the deleter
-- write. Collaborator rows stay: they say who could see the set, and removing
-- them would revoke, which a deleted set does not need.
CREATE FUNCTION app.tombstone_children() RETURNS trigger
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, app, pg_temp
AS $$
BEGIN
    IF TG_TABLE_NAME = 'study_sets' THEN
        UPDATE app.terms SET is_deleted = true WHERE set_id = NEW.id AND NOT is_deleted;
        UPDATE app.folder_sets SET is_deleted = true WHERE set_id = NEW.id AND NOT is_deleted;
    ELSIF TG_TABLE_NAME = 'folders' THEN
        UPDATE app.folder_sets SET is_deleted = true WHERE folder_id = NEW.id AND NOT is_deleted;
    END IF;
    RETURN NULL;
END
$$;
REVOKE EXECUTE ON FUNCTION app.tombstone_children() FROM PUBLIC;

CREATE TRIGGER study_sets_tombstone_children
    AFTER UPDATE ON app.study_sets
    FOR EACH ROW WHEN (NEW.is_deleted AND NOT OLD.is_deleted) EXECUTE FUNCTION app.tombstone_children();
CREATE TRIGGER folders_tombstone_children
    AFTER UPDATE ON app.folders
    FOR EACH ROW WHEN (NEW.is_deleted AND NOT OLD.is_deleted) EXECUTE FUNCTION app.tombstone_children();
