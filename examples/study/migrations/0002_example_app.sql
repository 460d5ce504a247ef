-- 0002_example_app.sql: the example study app, schema `app`.
--
-- Applied by `ferry migrate` as the OWNER role, in one transaction, after
-- 0001. Requires the role `ferry_app` (see 0001). Every table is a sync
-- resource (ferry.enable_sync) and is guarded by Row Level Security for the
-- app role; the owner bypasses RLS (ENABLE, not FORCE) for migrations and purge.
--
-- Who may do what (API.md, "The example app schema"):
--   study_sets         read/write: the creator and live collaborators;
--                      create: only as yourself (creator_id = you).
--   terms              read/write: whoever can access the term's set.
--   folders            the owner only.
--   folder_sets        the folder's owner; a live row may only point at a set
--                      that owner can access (checked on write).
--   set_collaborators  written (added, soft-removed) only by the set's
--                      creator; readable by everyone with access to the set,
--                      so collaborators see who else is on it, and by the
--                      collaborator named in the row, even once removed.
-- Tombstones stay readable under the same rules: no policy looks at the
-- row's own is_deleted, only at whether a collaborator row is live.
--
-- Ownership columns (creator_id, owner_id) and parent/reference columns are
-- fixed at creation: the app role may INSERT them but not UPDATE them. A
-- term cannot move to another set; a join row is removed and re-added.
-- No DELETE privilege: deletes are soft (UPDATE ... SET is_deleted = true).

CREATE SCHEMA app;
COMMENT ON SCHEMA app IS 'The example study app served by Ferry.';

CREATE TABLE app.study_sets (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    creator_id  uuid NOT NULL DEFAULT ferry.current_user_id() REFERENCES ferry.users,
    title       text NOT NULL CONSTRAINT study_sets_title_length CHECK (length(title) BETWEEN 1 AND 500),
    description text NOT NULL DEFAULT '' CONSTRAINT study_sets_description_length CHECK (length(description) <= 10000)
);

-- Children of a set go with it when its tombstone is purged (ON DELETE
-- CASCADE only ever fires during a purge: other deletes become soft deletes).
CREATE TABLE app.terms (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    set_id     uuid NOT NULL REFERENCES app.study_sets ON DELETE CASCADE,
    word       text NOT NULL DEFAULT '' CONSTRAINT terms_word_length CHECK (length(word) <= 10000),
    definition text NOT NULL DEFAULT '' CONSTRAINT terms_definition_length CHECK (length(definition) <= 10000),
    -- Fractional index, compared bytewise; FerryRank validates the alphabet.
    rank       text COLLATE "C" NOT NULL DEFAULT 'U' CONSTRAINT terms_rank_length CHECK (length(rank) BETWEEN 1 AND 1024)
);

CREATE TABLE app.folders (
    id       uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id uuid NOT NULL DEFAULT ferry.current_user_id() REFERENCES ferry.users,
    name     text NOT NULL CONSTRAINT folders_name_length CHECK (length(name) BETWEEN 1 AND 200)
);

CREATE TABLE app.folder_sets (
    id        uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    folder_id uuid NOT NULL REFERENCES app.folders ON DELETE CASCADE,
    set_id    uuid NOT NULL REFERENCES app.study_sets ON DELETE CASCADE
);

CREATE TABLE app.set_collaborators (
    id      uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    set_id  uuid NOT NULL REFERENCES app.study_sets ON DELETE CASCADE,
    user_id uuid NOT NULL REFERENCES ferry.users
);

SELECT ferry.enable_sync('app.study_sets');
SELECT ferry.enable_sync('app.terms');
SELECT ferry.enable_sync('app.folders');
SELECT ferry.enable_sync('app.folder_sets');
SELECT ferry.enable_sync('app.set_collaborators');

-- Unique per pair among live rows only, so a removed pair can be added again.
CREATE UNIQUE INDEX folder_sets_live_pair_key ON app.folder_sets (folder_id, set_id) WHERE NOT is_deleted;
CREATE UNIQUE INDEX set_collaborators_live_pair_key ON app.set_collaborators (set_id, user_id) WHERE NOT is_deleted;

-- Every foreign key column (terms.set_id leads the ordering index).
CREATE INDEX study_sets_creator_id_idx ON app.study_sets (creator_id);
CREATE INDEX terms_set_rank_idx ON app.terms (set_id, rank, id);
CREATE INDEX folders_owner_id_idx ON app.folders (owner_id);
CREATE INDEX folder_sets_folder_id_idx ON app.folder_sets (folder_id);
CREATE INDEX folder_sets_set_id_idx ON app.folder_sets (set_id);
CREATE INDEX set_collaborators_set_id_idx ON app.set_collaborators (set_id);
CREATE INDEX set_collaborators_user_id_idx ON app.set_collaborators (user_id);

-- ---------------------------------------------------------------------------
-- Access helpers. SECURITY DEFINER (owned by the owner, who bypasses RLS) so
-- that the study_sets and set_collaborators policies do not recurse into each
-- other. Used as `x IN (SELECT app.accessible_set_ids())`: an uncorrelated
-- subquery, evaluated once per statement into a hash, not once per row.
-- ---------------------------------------------------------------------------

-- Sets the current user collaborates on (live collaborator rows only).
CREATE FUNCTION app.collaborator_set_ids() RETURNS SETOF uuid
    LANGUAGE sql STABLE SECURITY DEFINER ROWS 100
    SET search_path = pg_catalog, app, pg_temp
AS $$
    SELECT c.set_id FROM app.set_collaborators c
     WHERE c.user_id = ferry.current_user_id() AND NOT c.is_deleted;
$$;

-- Sets the current user can access: created or collaborating.
CREATE FUNCTION app.accessible_set_ids() RETURNS SETOF uuid
    LANGUAGE sql STABLE SECURITY DEFINER ROWS 100
    SET search_path = pg_catalog, app, pg_temp
AS $$
    SELECT s.id FROM app.study_sets s WHERE s.creator_id = ferry.current_user_id()
    UNION
    SELECT c.set_id FROM app.set_collaborators c
     WHERE c.user_id = ferry.current_user_id() AND NOT c.is_deleted;
$$;

-- Sets the current user created.
CREATE FUNCTION app.created_set_ids() RETURNS SETOF uuid
    LANGUAGE sql STABLE SECURITY DEFINER ROWS 100
    SET search_path = pg_catalog, app, pg_temp
AS $$
    SELECT s.id FROM app.study_sets s WHERE s.creator_id = ferry.current_user_id();
$$;

REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA app FROM PUBLIC;

-- ---------------------------------------------------------------------------
-- Row Level Security
-- ---------------------------------------------------------------------------

ALTER TABLE app.study_sets ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.terms ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.folders ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.folder_sets ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.set_collaborators ENABLE ROW LEVEL SECURITY;

-- The creator test is on the row itself (not through the helper), so that
-- INSERT ... RETURNING sees the row it has just created.
CREATE POLICY study_sets_read ON app.study_sets FOR SELECT
    USING (creator_id = ferry.current_user_id() OR id IN (SELECT app.collaborator_set_ids()));
CREATE POLICY study_sets_create ON app.study_sets FOR INSERT
    WITH CHECK (creator_id = ferry.current_user_id());
CREATE POLICY study_sets_write ON app.study_sets FOR UPDATE
    USING (creator_id = ferry.current_user_id() OR id IN (SELECT app.collaborator_set_ids()))
    WITH CHECK (creator_id = ferry.current_user_id() OR id IN (SELECT app.collaborator_set_ids()));

CREATE POLICY terms_by_set_access ON app.terms
    USING (set_id IN (SELECT app.accessible_set_ids()))
    WITH CHECK (set_id IN (SELECT app.accessible_set_ids()));

CREATE POLICY folders_owner ON app.folders
    USING (owner_id = ferry.current_user_id())
    WITH CHECK (owner_id = ferry.current_user_id());

-- Readable by the folder's owner even after losing access to the set, so
-- that the owner can still see and remove the link; a live link must point
-- at an accessible set whenever it is written.
CREATE POLICY folder_sets_read ON app.folder_sets FOR SELECT
    USING (folder_id IN (SELECT f.id FROM app.folders f WHERE f.owner_id = ferry.current_user_id()));
CREATE POLICY folder_sets_create ON app.folder_sets FOR INSERT
    WITH CHECK (folder_id IN (SELECT f.id FROM app.folders f WHERE f.owner_id = ferry.current_user_id())
                AND set_id IN (SELECT app.accessible_set_ids()));
CREATE POLICY folder_sets_write ON app.folder_sets FOR UPDATE
    USING (folder_id IN (SELECT f.id FROM app.folders f WHERE f.owner_id = ferry.current_user_id()))
    WITH CHECK (folder_id IN (SELECT f.id FROM app.folders f WHERE f.owner_id = ferry.current_user_id())
                AND (is_deleted OR set_id IN (SELECT app.accessible_set_ids())));

-- Everyone on a set sees its collaborator rows; a user also keeps seeing
-- their own rows after removal (as tombstones), which is how their client
-- and the changes feed learn that access was revoked.
CREATE POLICY set_collaborators_read ON app.set_collaborators FOR SELECT
    USING (user_id = ferry.current_user_id() OR set_id IN (SELECT app.accessible_set_ids()));
CREATE POLICY set_collaborators_create ON app.set_collaborators FOR INSERT
    WITH CHECK (set_id IN (SELECT app.created_set_ids()));
CREATE POLICY set_collaborators_write ON app.set_collaborators FOR UPDATE
    USING (set_id IN (SELECT app.created_set_ids()))
    WITH CHECK (set_id IN (SELECT app.created_set_ids()));

-- ---------------------------------------------------------------------------
-- Privileges for the app role. Introspection derives "writable" from these
-- column privileges: INSERT = may be sent on create, UPDATE = may be changed.
-- ---------------------------------------------------------------------------

GRANT USAGE ON SCHEMA app TO ferry_app;
GRANT EXECUTE ON FUNCTION app.collaborator_set_ids(), app.accessible_set_ids(), app.created_set_ids() TO ferry_app;

GRANT SELECT ON app.study_sets, app.terms, app.folders, app.folder_sets, app.set_collaborators TO ferry_app;

GRANT INSERT (id, creator_id, title, description) ON app.study_sets TO ferry_app;
GRANT UPDATE (title, description, is_deleted) ON app.study_sets TO ferry_app;

GRANT INSERT (id, set_id, word, definition, rank) ON app.terms TO ferry_app;
GRANT UPDATE (word, definition, rank, is_deleted) ON app.terms TO ferry_app;

GRANT INSERT (id, owner_id, name) ON app.folders TO ferry_app;
GRANT UPDATE (name, is_deleted) ON app.folders TO ferry_app;

GRANT INSERT (id, folder_id, set_id) ON app.folder_sets TO ferry_app;
GRANT UPDATE (is_deleted) ON app.folder_sets TO ferry_app;

GRANT INSERT (id, set_id, user_id) ON app.set_collaborators TO ferry_app;
GRANT UPDATE (is_deleted) ON app.set_collaborators TO ferry_app;
