-- 0020_classes.sql: classes, whose students follow their teacher's sets
-- (issue 46, item 5), with Ferry's grant rule (core 0033).
--
-- A teacher owns a class (`classes`), adds students (`class_members`, a
-- members rule: the student reads the class, its other members and its links)
-- and links their own sets to it (`class_sets`, a grant rule): every live
-- student of the class then reads each linked set and its terms, through GET,
-- Index, the changes feed and the stream `set`, without writing them and
-- without reading who collaborates on them. Removing a student, or unlinking a
-- set, sends the student `revoked` entries for the set's rows, unless they
-- still read it another way (a collaborator, or another class of theirs).

CREATE TABLE app.classes (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    teacher_id uuid NOT NULL REFERENCES ferry.users,
    name       text NOT NULL CONSTRAINT classes_name_length CHECK (char_length(name) BETWEEN 1 AND 200)
);
COMMENT ON COLUMN app.classes.name IS 'The class''s name, as its students see it: 1 to 200 characters.';
COMMENT ON COLUMN app.classes.teacher_id IS 'Who teaches the class: only they add students and link sets.';

CREATE TABLE app.class_members (
    id       uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    class_id uuid NOT NULL REFERENCES app.classes,
    user_id  uuid NOT NULL REFERENCES ferry.users
);
COMMENT ON COLUMN app.class_members.class_id IS 'The class the student is in.';
COMMENT ON COLUMN app.class_members.user_id IS 'The student: they read the class and the sets linked to it.';

CREATE TABLE app.class_sets (
    id       uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    class_id uuid NOT NULL REFERENCES app.classes,
    set_id   uuid NOT NULL REFERENCES app.study_sets
);
COMMENT ON COLUMN app.class_sets.class_id IS 'The class that follows the set.';
COMMENT ON COLUMN app.class_sets.set_id IS 'The teacher''s set the class''s students read (one link per class and set).';

-- A class belongs to its teacher.
SELECT ferry.sync_owned('app.classes', owner => 'teacher_id');
-- A live member row puts its user in the class; the teacher adds and removes them.
SELECT ferry.sync_members('app.class_members', scope => 'class_id', member => 'user_id');
-- A live link gives the class's students read access to the set; the teacher links only their own sets.
SELECT ferry.sync_grant('app.class_sets', scope => 'set_id', through => 'class_id');

-- Unique per pair among live rows only, so a removed pair can be added again.
CREATE UNIQUE INDEX class_members_live_pair ON app.class_members (class_id, user_id) WHERE NOT is_deleted;
CREATE UNIQUE INDEX class_sets_live_pair ON app.class_sets (class_id, set_id) WHERE NOT is_deleted;
