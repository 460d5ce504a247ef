-- 0001_todo.sql: a to-do app on Ferry, written only the public way.
--
-- Lists shared with members, todos ranked within a list, and notes each user
-- keeps to themself. Ferry's own schema is built into `ferry` and applied
-- first; this file makes the tables and states one sync rule per table, and
-- Ferry generates the policies, grants, indexes, access scope and triggers.
--
--   ferry migrate --dir examples/todo/migrations

CREATE SCHEMA app;

-- A list belongs to its owner; its members read and write it too.
CREATE TABLE app.lists (
    id       uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id uuid NOT NULL REFERENCES ferry.users,
    title    text NOT NULL CONSTRAINT lists_title_length CHECK (length(title) BETWEEN 1 AND 200),
    color    text NOT NULL DEFAULT 'blue' CONSTRAINT lists_color CHECK (color IN ('blue', 'green', 'orange', 'red', 'gray'))
);
SELECT ferry.sync_owned('app.lists', owner => 'owner_id');

-- A live row shares the list with its user; the list's owner adds and removes members.
CREATE TABLE app.list_members (
    id      uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    list_id uuid NOT NULL REFERENCES app.lists ON DELETE CASCADE,
    user_id uuid NOT NULL REFERENCES ferry.users
);
SELECT ferry.sync_members('app.list_members', scope => 'list_id', member => 'user_id');
-- One live row per list and user (the rule has added is_deleted); a removed member can be added again.
CREATE UNIQUE INDEX list_members_live_pair_key ON app.list_members (list_id, user_id) WHERE NOT is_deleted;

-- A todo is readable and writable by whoever can read its list, ordered by rank
-- within it, and deleted with it.
CREATE TABLE app.todos (
    id      uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    list_id uuid NOT NULL REFERENCES app.lists ON DELETE CASCADE,
    title   text NOT NULL CONSTRAINT todos_title_length CHECK (length(title) BETWEEN 1 AND 500),
    done    boolean NOT NULL DEFAULT false,
    due_on  date,
    rank    text COLLATE "C" NOT NULL DEFAULT 'U' CONSTRAINT todos_rank_length CHECK (length(rank) BETWEEN 1 AND 1024),
    created_at timestamptz NOT NULL DEFAULT now()
);
SELECT ferry.sync_child('app.todos', parent => 'list_id', read_only => ARRAY['created_at']);

-- A note is its author's alone: it belongs to no list, and no member of any list reads it.
CREATE TABLE app.notes (
    id       uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id uuid NOT NULL REFERENCES ferry.users,
    body     text NOT NULL DEFAULT '' CONSTRAINT notes_body_length CHECK (length(body) <= 10000),
    pinned   boolean NOT NULL DEFAULT false
);
SELECT ferry.sync_owned('app.notes', owner => 'owner_id');
