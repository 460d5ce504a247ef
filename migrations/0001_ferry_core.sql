-- 0001_ferry_core.sql: Ferry's own schema `ferry`.
--
-- Applied by `ferry migrate` as the OWNER role (ferry_owner in development), in
-- one transaction. Everything created here is owned by that role, and the
-- SECURITY DEFINER functions run with its rights.
--
-- Requires: the role `ferry_app` exists (LOGIN, NOBYPASSRLS, not the owner).
-- The server connects as ferry_app; it gets USAGE on the schema, EXECUTE on
-- the functions below, SELECT on the two small catalogue tables, and the
-- idempotency table through Row Level Security. It gets nothing on users,
-- tokens or login_failures: those are only reachable through functions.
-- deploy/local.sh creates the role for development; production creates it
-- as deploy/README.md says.

CREATE EXTENSION IF NOT EXISTS pgcrypto;

CREATE SCHEMA ferry;
COMMENT ON SCHEMA ferry IS 'Ferry sync server: users, tokens, sync bookkeeping. Not exposed as resources.';

-- The caller's user id, set per request by ferry.begin_request (transaction-local).
-- Plain, inlinable SQL so policies like `creator_id = ferry.current_user_id()` can use indexes.
CREATE FUNCTION ferry.current_user_id() RETURNS uuid
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN NULLIF(current_setting('ferry.user_id', true), '')::uuid;

-- Milliseconds since the Unix epoch, from the wall clock (not the transaction start).
CREATE FUNCTION ferry.now_ms() RETURNS bigint
    LANGUAGE sql VOLATILE PARALLEL SAFE
    RETURN floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint;

-- ---------------------------------------------------------------------------
-- Users, tokens, login throttling
-- ---------------------------------------------------------------------------

CREATE TABLE ferry.users (
    id            uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    name          text        NOT NULL UNIQUE
                  CONSTRAINT users_name_format CHECK (name ~ '^[A-Za-z0-9_][A-Za-z0-9_.@+-]{0,127}$'),
    password_hash text        NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE ferry.users IS 'Accounts. password_hash is bcrypt (pgcrypto crypt/gen_salt(''bf'')).';

CREATE TABLE ferry.tokens (
    -- sha256 of the bearer token, computed by the server; the token itself is never stored.
    token_hash bytea       PRIMARY KEY CONSTRAINT tokens_hash_length CHECK (octet_length(token_hash) = 32),
    user_id    uuid        NOT NULL REFERENCES ferry.users ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    revoked    boolean     NOT NULL DEFAULT false
);
CREATE INDEX tokens_expires_at_idx ON ferry.tokens (expires_at);
CREATE INDEX tokens_user_id_idx ON ferry.tokens (user_id);

CREATE TABLE ferry.login_failures (
    name         text        PRIMARY KEY,
    failures     int         NOT NULL DEFAULT 0,
    last_failure timestamptz NOT NULL DEFAULT now(),
    locked_until timestamptz
);
COMMENT ON TABLE ferry.login_failures IS
    'Consecutive failed logins per name (known or not), for throttling. Reset on success, purged when stale.';

-- Completed responses per user and Idempotency-Key. The app role reaches its
-- own rows directly, under RLS on user_id (see the policy below), so the
-- later idempotency code can claim, read and complete keys with plain SQL
-- inside the request's pipelined transaction.
CREATE TABLE ferry.idempotency_keys (
    user_id          uuid        NOT NULL DEFAULT ferry.current_user_id() REFERENCES ferry.users ON DELETE CASCADE,
    key              text        NOT NULL CONSTRAINT idempotency_key_length CHECK (length(key) BETWEEN 1 AND 255),
    request_hash     bytea       NOT NULL,
    status           int,        -- null while the first request is in progress
    response_headers jsonb,
    response_body    bytea,
    created_at       timestamptz NOT NULL DEFAULT now(),
    expires_at       timestamptz NOT NULL DEFAULT now() + interval '24 hours',
    PRIMARY KEY (user_id, key)
);
CREATE INDEX idempotency_keys_expires_at_idx ON ferry.idempotency_keys (expires_at);

ALTER TABLE ferry.idempotency_keys ENABLE ROW LEVEL SECURITY;
CREATE POLICY idempotency_keys_own ON ferry.idempotency_keys
    USING (user_id = ferry.current_user_id())
    WITH CHECK (user_id = ferry.current_user_id());

-- ---------------------------------------------------------------------------
-- Authentication functions
-- ---------------------------------------------------------------------------

-- Starts a request: the first statement of every authenticated request's
-- transaction. One primary-key lookup. Sets ferry.user_id for the rest of the
-- transaction (RLS reads it through ferry.current_user_id()).
CREATE FUNCTION ferry.begin_request(p_token_hash bytea) RETURNS uuid
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
DECLARE
    v_user uuid;
BEGIN
    SELECT t.user_id INTO v_user
      FROM ferry.tokens t
     WHERE t.token_hash = p_token_hash AND NOT t.revoked AND t.expires_at > now();
    IF v_user IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'FR401', MESSAGE = 'invalid token';
    END IF;
    PERFORM set_config('ferry.user_id', v_user::text, true);
    RETURN v_user;
END
$$;

-- Checks a name and password, with throttling per name.
--   (id, 0)      correct credentials
--   (null, 0)    wrong credentials (the same whether or not the user exists)
--   (null, ms)   locked: try again in ms; the password was NOT checked
-- It returns rather than raises so that the failure counter update commits.
CREATE FUNCTION ferry.authenticate(p_name text, p_password text)
    RETURNS TABLE (user_id uuid, retry_after_ms bigint)
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, public, pg_temp
AS $$
DECLARE
    -- bcrypt (cost 10) of a password nobody uses: unknown names cost as much as known ones.
    c_dummy_hash constant text := '$2a$10$IhNVJtQybKF.pvixakqnA.JkYM6k4/hsbDcjHGCE4Mx85HGhrdZKq';
    c_free_failures constant int := 4;           -- the 5th consecutive failure locks
    c_max_lock_ms constant bigint := 300000;     -- 5 minutes
    v_locked_until timestamptz;
    v_id uuid;
    v_hash text;
    v_ok boolean;
    v_failures int;
BEGIN
    IF p_name IS NULL OR p_password IS NULL OR length(p_name) > 256 THEN
        -- Cannot be anyone's name; spend the same time and record nothing.
        PERFORM crypt(coalesce(p_password, ''), c_dummy_hash);
        RETURN QUERY SELECT NULL::uuid, 0::bigint;
        RETURN;
    END IF;

    SELECT f.locked_until INTO v_locked_until
      FROM ferry.login_failures f WHERE f.name = p_name;
    IF v_locked_until IS NOT NULL AND v_locked_until > clock_timestamp() THEN
        RETURN QUERY SELECT NULL::uuid,
            greatest(1, ceil(extract(epoch FROM v_locked_until - clock_timestamp()) * 1000))::bigint;
        RETURN;
    END IF;

    SELECT u.id, u.password_hash INTO v_id, v_hash FROM ferry.users u WHERE u.name = p_name;
    IF v_id IS NULL THEN
        PERFORM crypt(p_password, c_dummy_hash);
        v_ok := false;
    ELSE
        v_ok := crypt(p_password, v_hash) = v_hash;
    END IF;

    IF v_ok THEN
        DELETE FROM ferry.login_failures f WHERE f.name = p_name;
        RETURN QUERY SELECT v_id, 0::bigint;
        RETURN;
    END IF;

    INSERT INTO ferry.login_failures AS f (name, failures, last_failure)
         VALUES (p_name, 1, clock_timestamp())
    ON CONFLICT (name) DO UPDATE
         SET failures = f.failures + 1, last_failure = excluded.last_failure
    RETURNING f.failures INTO v_failures;
    IF v_failures > c_free_failures THEN
        -- 1 s at the 5th failure, doubling, capped.
        UPDATE ferry.login_failures f
           SET locked_until = clock_timestamp() + make_interval(secs =>
                   least(c_max_lock_ms, 1000::bigint << least(v_failures - c_free_failures - 1, 20)) / 1000.0)
         WHERE f.name = p_name;
    END IF;
    RETURN QUERY SELECT NULL::uuid, 0::bigint;
END
$$;

-- Creates a user with a bcrypt password hash. A taken name raises 23505
-- (unique_violation); a malformed name raises 23514 (check_violation).
CREATE FUNCTION ferry.create_user(p_name text, p_password text) RETURNS uuid
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, public, pg_temp
AS $$
DECLARE
    v_id uuid;
BEGIN
    IF p_password IS NULL OR p_password = '' THEN
        RAISE EXCEPTION USING ERRCODE = '22023', MESSAGE = 'password must not be empty';
    END IF;
    INSERT INTO ferry.users (name, password_hash)
         VALUES (p_name, crypt(p_password, gen_salt('bf', 10)))
    RETURNING id INTO v_id;
    RETURN v_id;
END
$$;

-- Stores a token's sha256 for a user; returns when it expires.
CREATE FUNCTION ferry.issue_token(p_user_id uuid, p_token_hash bytea, p_ttl_seconds int)
    RETURNS timestamptz
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
DECLARE
    v_expires timestamptz;
BEGIN
    IF p_ttl_seconds IS NULL OR p_ttl_seconds <= 0 THEN
        RAISE EXCEPTION USING ERRCODE = '22023', MESSAGE = 'token ttl must be positive';
    END IF;
    INSERT INTO ferry.tokens (token_hash, user_id, expires_at)
         VALUES (p_token_hash, p_user_id, now() + make_interval(secs => p_ttl_seconds))
    RETURNING expires_at INTO v_expires;
    RETURN v_expires;
END
$$;

-- Revokes a token; true if it was live.
CREATE FUNCTION ferry.revoke_token(p_token_hash bytea) RETURNS boolean
    LANGUAGE sql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
    WITH r AS (
        UPDATE ferry.tokens SET revoked = true
         WHERE token_hash = p_token_hash AND NOT revoked
        RETURNING 1
    )
    SELECT count(*) > 0 FROM r;
$$;

-- Looks a user up by name (for the CLI). created_at is in ms since the epoch.
CREATE FUNCTION ferry.user_by_name(p_name text)
    RETURNS TABLE (id uuid, name text, created_at bigint)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
    SELECT u.id, u.name, floor(extract(epoch FROM u.created_at) * 1000)::bigint
      FROM ferry.users u WHERE u.name = p_name;
$$;

-- The current request's user (GET /v1/auth/me). created_at is in ms since the epoch.
CREATE FUNCTION ferry.me()
    RETURNS TABLE (id uuid, name text, created_at bigint)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
    SELECT u.id, u.name, floor(extract(epoch FROM u.created_at) * 1000)::bigint
      FROM ferry.users u WHERE u.id = ferry.current_user_id();
$$;

-- ---------------------------------------------------------------------------
-- Sync bookkeeping
-- ---------------------------------------------------------------------------

-- Tables registered by ferry.enable_sync; introspection reads ferry.sync_resources.
CREATE TABLE ferry.synced_tables (
    table_oid   regclass    PRIMARY KEY,
    schema_name name        NOT NULL,   -- as registered; sync_resources shows the current name
    table_name  name        NOT NULL,
    enabled_at  timestamptz NOT NULL DEFAULT now()
);

-- The live view: current names (after renames), dropped tables left out.
CREATE VIEW ferry.sync_resources AS
    SELECT s.table_oid, n.nspname AS schema_name, c.relname AS table_name, s.enabled_at
      FROM ferry.synced_tables s
      JOIN pg_catalog.pg_class c ON c.oid = s.table_oid
      JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace;

-- The highest _ferry_xid ever purged. A changes cursor at or below it may have
-- missed a purged tombstone and answers 410 cursor_expired.
CREATE TABLE ferry.purge_horizon (
    singleton   boolean     PRIMARY KEY DEFAULT true CONSTRAINT purge_horizon_singleton CHECK (singleton),
    horizon_xid xid8        NOT NULL DEFAULT '0',
    purged_at   timestamptz
);
INSERT INTO ferry.purge_horizon DEFAULT VALUES;

-- BEFORE INSERT: the database, not the writer, sets the sync columns.
CREATE FUNCTION ferry.sync_before_insert() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
BEGIN
    NEW.revision := 1;
    NEW.last_modified := ferry.now_ms();
    NEW._ferry_xid := pg_current_xact_id();
    NEW._ferry_field_revisions := '{}'::jsonb;
    NEW.is_deleted := coalesce(NEW.is_deleted, false);
    RETURN NEW;
END
$$;

-- BEFORE UPDATE: bump the revision, keep last_modified monotonic per row,
-- stamp the writing transaction, and record per column the revision at which
-- it last changed. Writers cannot forge any of these.
CREATE FUNCTION ferry.sync_before_update() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
DECLARE
    v_new jsonb;
    v_old jsonb;
    v_changed jsonb;
BEGIN
    IF NEW.id IS DISTINCT FROM OLD.id THEN
        RAISE EXCEPTION USING ERRCODE = '42501',
            MESSAGE = format('the id of a synced row cannot change (%s)', TG_RELID::regclass);
    END IF;
    NEW.revision := OLD.revision + 1;
    NEW.last_modified := greatest(ferry.now_ms(), OLD.last_modified + 1);
    NEW._ferry_xid := pg_current_xact_id();
    v_new := to_jsonb(NEW);
    v_old := to_jsonb(OLD);
    SELECT coalesce(jsonb_object_agg(n.key, NEW.revision), '{}'::jsonb) INTO v_changed
      FROM jsonb_each(v_new) AS n
     WHERE n.key NOT IN ('id', 'revision', 'last_modified')
       AND left(n.key, 7) <> '_ferry_'
       AND n.value IS DISTINCT FROM v_old -> n.key;
    NEW._ferry_field_revisions := OLD._ferry_field_revisions || v_changed;
    RETURN NEW;
END
$$;

-- BEFORE DELETE: a hard DELETE from anywhere becomes a soft delete, so the
-- changes feed sees it. Only purging (ferry.purging = on) really deletes; it
-- then remembers the highest purged _ferry_xid of the transaction (cascaded
-- child rows included) for ferry.purge_tombstones.
CREATE FUNCTION ferry.sync_before_delete() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
DECLARE
    v_max text;
BEGIN
    IF current_setting('ferry.purging', true) = 'on' THEN
        v_max := NULLIF(current_setting('ferry.purged_xid', true), '');
        IF v_max IS NULL OR OLD._ferry_xid > v_max::xid8 THEN
            PERFORM set_config('ferry.purged_xid', OLD._ferry_xid::text, true);
        END IF;
        RETURN OLD;
    END IF;
    EXECUTE format('UPDATE %s SET is_deleted = true WHERE id = $1 AND NOT is_deleted', TG_RELID::regclass)
      USING OLD.id;
    RETURN NULL;
END
$$;

-- BEFORE TRUNCATE: a truncate would vanish rows behind the changes feed's back.
CREATE FUNCTION ferry.sync_before_truncate() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
BEGIN
    IF current_setting('ferry.purging', true) = 'on' THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION USING ERRCODE = '55000',
        MESSAGE = format('%s is synced: TRUNCATE would hide deletes from clients', TG_RELID::regclass),
        HINT = 'Delete rows (they become tombstones), or SET ferry.purging = on to really remove them.';
END
$$;

-- Makes a table a sync resource. Idempotent. Requires a single-column primary
-- key named id. Adds the sync columns (revision, last_modified, is_deleted)
-- and the hidden bookkeeping (_ferry_xid, _ferry_field_revisions), the
-- triggers, an index for the changes feed and one for purging, and registers
-- the table. The triggers are named zz_ferry_* so they fire after the table's
-- own BEFORE triggers (alphabetical order) and see the final row.
CREATE FUNCTION ferry.enable_sync(p_table regclass) RETURNS void
    LANGUAGE plpgsql VOLATILE
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
DECLARE
    v_kind "char";
    v_schema name;
    v_name name;
    v_pk text[];
    v_col record;
    v_now_ms bigint := ferry.now_ms();
    v_xid xid8 := pg_current_xact_id();
    v_expected constant jsonb := jsonb_build_object(
        'revision', 'bigint', 'last_modified', 'bigint', 'is_deleted', 'boolean',
        '_ferry_xid', 'xid8', '_ferry_field_revisions', 'jsonb');
    v_type text;
BEGIN
    SELECT c.relkind, n.nspname, c.relname INTO v_kind, v_schema, v_name
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.oid = p_table;
    IF v_kind NOT IN ('r', 'p') THEN
        RAISE EXCEPTION USING ERRCODE = '42809', MESSAGE = format('%s is not a table', p_table);
    END IF;

    SELECT array_agg(a.attname::text ORDER BY a.attnum) INTO v_pk
      FROM pg_index i
      JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
     WHERE i.indrelid = p_table AND i.indisprimary;
    IF v_pk IS DISTINCT FROM ARRAY['id'] THEN
        RAISE EXCEPTION USING ERRCODE = '42P16',
            MESSAGE = format('%s needs a single-column primary key named id to be synced (has %s)',
                             p_table, coalesce(array_to_string(v_pk, ', '), 'none'));
    END IF;

    -- Constant defaults first, so adding a column to a big table does not rewrite it;
    -- the real (volatile) defaults are set right after.
    IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = p_table AND attname = 'revision' AND NOT attisdropped) THEN
        EXECUTE format('ALTER TABLE %s ADD COLUMN revision bigint NOT NULL DEFAULT 1', p_table);
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = p_table AND attname = 'last_modified' AND NOT attisdropped) THEN
        EXECUTE format('ALTER TABLE %s ADD COLUMN last_modified bigint NOT NULL DEFAULT %s', p_table, v_now_ms);
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = p_table AND attname = 'is_deleted' AND NOT attisdropped) THEN
        EXECUTE format('ALTER TABLE %s ADD COLUMN is_deleted boolean NOT NULL DEFAULT false', p_table);
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = p_table AND attname = '_ferry_xid' AND NOT attisdropped) THEN
        EXECUTE format('ALTER TABLE %s ADD COLUMN _ferry_xid xid8 NOT NULL DEFAULT %L', p_table, v_xid);
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = p_table AND attname = '_ferry_field_revisions' AND NOT attisdropped) THEN
        EXECUTE format('ALTER TABLE %s ADD COLUMN _ferry_field_revisions jsonb NOT NULL DEFAULT %L', p_table, '{}');
    END IF;

    FOR v_col IN SELECT key, value #>> '{}' AS want FROM jsonb_each(v_expected) LOOP
        SELECT format_type(a.atttypid, a.atttypmod) INTO v_type
          FROM pg_attribute a WHERE a.attrelid = p_table AND a.attname = v_col.key AND NOT a.attisdropped;
        IF v_type IS DISTINCT FROM v_col.want THEN
            RAISE EXCEPTION USING ERRCODE = '42804',
                MESSAGE = format('%s.%s must be %s to be synced, not %s', p_table, v_col.key, v_col.want, v_type);
        END IF;
    END LOOP;

    EXECUTE format($f$
        ALTER TABLE %1$s
            ALTER COLUMN revision SET DEFAULT 1,
            ALTER COLUMN revision SET NOT NULL,
            ALTER COLUMN last_modified SET DEFAULT ferry.now_ms(),
            ALTER COLUMN last_modified SET NOT NULL,
            ALTER COLUMN is_deleted SET DEFAULT false,
            ALTER COLUMN is_deleted SET NOT NULL,
            ALTER COLUMN _ferry_xid SET DEFAULT pg_current_xact_id(),
            ALTER COLUMN _ferry_xid SET NOT NULL,
            ALTER COLUMN _ferry_field_revisions SET DEFAULT '{}'::jsonb,
            ALTER COLUMN _ferry_field_revisions SET NOT NULL
    $f$, p_table);

    EXECUTE format('CREATE OR REPLACE TRIGGER zz_ferry_sync_insert BEFORE INSERT ON %s
                    FOR EACH ROW EXECUTE FUNCTION ferry.sync_before_insert()', p_table);
    EXECUTE format('CREATE OR REPLACE TRIGGER zz_ferry_sync_update BEFORE UPDATE ON %s
                    FOR EACH ROW EXECUTE FUNCTION ferry.sync_before_update()', p_table);
    EXECUTE format('CREATE OR REPLACE TRIGGER zz_ferry_sync_delete BEFORE DELETE ON %s
                    FOR EACH ROW EXECUTE FUNCTION ferry.sync_before_delete()', p_table);
    EXECUTE format('CREATE OR REPLACE TRIGGER zz_ferry_sync_truncate BEFORE TRUNCATE ON %s
                    FOR EACH STATEMENT EXECUTE FUNCTION ferry.sync_before_truncate()', p_table);

    -- The changes feed walks (_ferry_xid, id); the purge looks for old tombstones.
    EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON %s (_ferry_xid, id)',
                   left(v_name, 45) || '_ferry_xid_idx', p_table);
    EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON %s (last_modified) WHERE is_deleted',
                   left(v_name, 45) || '_ferry_tombstones_idx', p_table);

    -- Forget dropped tables first, so a reused OID cannot inherit a registration.
    DELETE FROM ferry.synced_tables s
     WHERE NOT EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = s.table_oid);
    INSERT INTO ferry.synced_tables (table_oid, schema_name, table_name)
         VALUES (p_table, v_schema, v_name)
    ON CONFLICT (table_oid) DO NOTHING;
END
$$;

-- Really deletes tombstones older than p_older_than_ms (an age in ms, e.g.
-- retention_days * 86400000), at most p_batch rows per call across all
-- synced tables, so that each call is a short transaction: call it until it
-- returns less than p_batch. Rows of other tables that reference a purged row
-- with ON DELETE CASCADE go with it. Raises the purge horizon to the highest
-- purged _ferry_xid. Also deletes expired or revoked tokens, expired
-- idempotency keys and stale login failure counters. Returns the number of
-- tombstones deleted (cascaded rows not counted).
CREATE FUNCTION ferry.purge_tombstones(p_older_than_ms bigint, p_batch int) RETURNS bigint
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
DECLARE
    v_was_purging text := current_setting('ferry.purging', true);
    v_cutoff bigint;
    v_table regclass;
    v_n bigint;
    v_total bigint := 0;
    v_max text;
BEGIN
    IF p_older_than_ms IS NULL OR p_older_than_ms < 0 OR p_batch IS NULL OR p_batch < 1 THEN
        RAISE EXCEPTION USING ERRCODE = '22023',
            MESSAGE = 'purge_tombstones needs a non-negative age and a positive batch size';
    END IF;
    v_cutoff := ferry.now_ms() - p_older_than_ms;
    -- Transaction-local, and put back before returning. (A function's SET
    -- clause cannot name a placeholder setting without superuser in PG15.)
    PERFORM set_config('ferry.purging', 'on', true);
    PERFORM set_config('ferry.purged_xid', '', true);

    FOR v_table IN SELECT table_oid FROM ferry.sync_resources ORDER BY schema_name, table_name LOOP
        EXIT WHEN v_total >= p_batch;
        EXECUTE format($f$
            WITH d AS (
                DELETE FROM %1$s
                 WHERE is_deleted AND last_modified < $1
                   AND id IN (SELECT id FROM %1$s
                               WHERE is_deleted AND last_modified < $1
                               LIMIT $2 FOR UPDATE SKIP LOCKED)
                RETURNING 1)
            SELECT count(*) FROM d
        $f$, v_table) INTO v_n USING v_cutoff, p_batch - v_total;
        v_total := v_total + v_n;
    END LOOP;

    v_max := NULLIF(current_setting('ferry.purged_xid', true), '');
    IF v_max IS NOT NULL THEN
        UPDATE ferry.purge_horizon
           SET horizon_xid = greatest(horizon_xid, v_max::xid8), purged_at = now();
    END IF;
    PERFORM set_config('ferry.purged_xid', '', true);
    PERFORM set_config('ferry.purging', coalesce(v_was_purging, ''), true);

    DELETE FROM ferry.tokens WHERE expires_at < now() OR revoked;
    DELETE FROM ferry.idempotency_keys WHERE expires_at < now();
    DELETE FROM ferry.login_failures
     WHERE greatest(last_failure, coalesce(locked_until, last_failure)) < now() - interval '1 day';
    RETURN v_total;
END
$$;

-- ---------------------------------------------------------------------------
-- Privileges for the app role
-- ---------------------------------------------------------------------------

-- pgcrypto normally lives in public; if it was installed elsewhere before, the
-- functions that hash passwords must look there instead.
DO $$
DECLARE
    v_schema name;
BEGIN
    SELECT e.extnamespace::regnamespace::name INTO v_schema FROM pg_extension e WHERE e.extname = 'pgcrypto';
    IF v_schema <> 'public' THEN
        EXECUTE format('ALTER FUNCTION ferry.authenticate(text, text) SET search_path = pg_catalog, ferry, %I, pg_temp', v_schema);
        EXECUTE format('ALTER FUNCTION ferry.create_user(text, text) SET search_path = pg_catalog, ferry, %I, pg_temp', v_schema);
    END IF;
END
$$;

-- Functions are private unless granted: nothing here is for PUBLIC by default.
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA ferry FROM PUBLIC;
GRANT USAGE ON SCHEMA ferry TO ferry_app;
GRANT EXECUTE ON FUNCTION
    ferry.current_user_id(),
    ferry.now_ms(),
    ferry.begin_request(bytea),
    ferry.authenticate(text, text),
    ferry.create_user(text, text),
    ferry.issue_token(uuid, bytea, int),
    ferry.revoke_token(bytea),
    ferry.user_by_name(text),
    ferry.me(),
    ferry.purge_tombstones(bigint, int)
  TO ferry_app;
-- Used by column defaults of synced tables, so any writer may evaluate them.
GRANT EXECUTE ON FUNCTION ferry.current_user_id(), ferry.now_ms() TO PUBLIC;
GRANT SELECT ON ferry.synced_tables, ferry.sync_resources, ferry.purge_horizon TO ferry_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON ferry.idempotency_keys TO ferry_app;
