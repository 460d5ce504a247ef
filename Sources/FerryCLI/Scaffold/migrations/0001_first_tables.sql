-- 0001_first_tables.sql: this app's first tables, synced by Ferry.
--
-- `ferry migrate` applies Ferry's own migrations (built into `ferry`), then the
-- files of this directory in version order, each once, in a transaction of its
-- own. Add the next change as 0002_<what>.sql; never edit a file once applied.
--
-- Each table states its sync rule in one call, and Ferry generates the Row Level
-- Security policies, the grants, the indexes, and what the changes feed needs.
-- The rules add the sync columns (revision, last_modified, is_deleted), so
-- indexes and constraints on those come after them.

CREATE SCHEMA app;

-- A project belongs to the user who creates it (owner_id defaults to the caller).
CREATE TABLE app.projects (
    id       uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id uuid NOT NULL REFERENCES ferry.users,
    name     text NOT NULL CONSTRAINT projects_name_length CHECK (length(name) BETWEEN 1 AND 200)
);
SELECT ferry.sync_owned('app.projects', owner => 'owner_id');

-- A task is readable and writable by whoever can read its project, ordered by rank
-- within it, and deleted with it.
CREATE TABLE app.tasks (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id uuid NOT NULL REFERENCES app.projects ON DELETE CASCADE,
    title      text NOT NULL CONSTRAINT tasks_title_length CHECK (length(title) BETWEEN 1 AND 500),
    done       boolean NOT NULL DEFAULT false,
    rank       text COLLATE "C" NOT NULL DEFAULT 'U'
);
SELECT ferry.sync_child('app.tasks', parent => 'project_id');
