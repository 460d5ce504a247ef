-- What each column of the study app holds, for people reading the schema and
-- for the models `ferry generate swift` writes (a column's comment becomes its
-- property's doc comment; GET /v1 and the OpenAPI document carry it too).
COMMENT ON COLUMN app.study_sets.title IS 'The set''s name, as its list shows it: 1 to 500 characters.';
COMMENT ON COLUMN app.study_sets.description IS 'What the set is for, in the creator''s words: up to 10,000 characters.';
COMMENT ON COLUMN app.study_sets.creator_id IS 'Who made the set: only they may share it.';
COMMENT ON COLUMN app.terms.word IS 'The word or phrase to learn.';
COMMENT ON COLUMN app.terms.definition IS 'What it means, in the learner''s language.';
COMMENT ON COLUMN app.terms.rank IS 'Where the term stands in its set: terms are studied in rank order.';
COMMENT ON COLUMN app.folders.name IS 'The folder''s name: 1 to 200 characters.';
COMMENT ON COLUMN app.folder_sets.folder_id IS 'The folder the set is filed in.';
COMMENT ON COLUMN app.folder_sets.set_id IS 'The set filed in the folder (one link per folder and set).';
COMMENT ON COLUMN app.set_collaborators.user_id IS 'The user the set is shared with: they may read and edit it.';
