-- 0019_public_sets.sql: sets any signed-in user may browse and subscribe to
-- (issue 46), as a published Quizlet set is.
--
-- A set whose `is_public` is true is readable (never writable) by every
-- signed-in user, and so are its terms (their rule reads through the set):
-- through GET and Index, which browse them (`GET /v1/study_sets?is_public=true
-- &order=title`), and through the stream `set` (0018), which a device
-- subscribes to in order to keep one offline. They are not in anyone's default
-- stream except their creator's and collaborators': a public set reaches only
-- the devices that subscribe to it. Who collaborates on a set stays private to
-- its members (ferry.sync_public leaves member rows alone). docs/API.md
-- ("Subscriptions") has the contract.
--
-- The column comes before the rule: ferry.sync_public regenerates the table's
-- grants, which name its writable columns.

ALTER TABLE app.study_sets ADD COLUMN is_public boolean NOT NULL DEFAULT false;
COMMENT ON COLUMN app.study_sets.is_public IS
    'Readable by every signed-in user, who may browse it by title and subscribe to it; only its creator and collaborators write it.';
SELECT ferry.sync_public('app.study_sets', flag => 'is_public');

-- Browsing: the public sets by title, as Index pages them.
CREATE INDEX study_sets_public_by_title ON app.study_sets (title, id) WHERE is_public;
