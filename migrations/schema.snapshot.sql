TABLE ferry.access_grants (row level security)
  user_id uuid NOT NULL
  xid xid8 NOT NULL DEFAULT ferry.stamp()
  scope_table regclass NOT NULL
  scope_id text NOT NULL
  created_at timestamp with time zone NOT NULL DEFAULT now()
  CONSTRAINT access_grants_pkey PRIMARY KEY (user_id, xid, scope_table, scope_id)
  CONSTRAINT access_grants_user_id_fkey FOREIGN KEY (user_id) REFERENCES ferry.users(id) ON DELETE CASCADE
  GRANT SELECT TO ferry_app

TABLE ferry.access_revocations (row level security)
  user_id uuid NOT NULL
  xid xid8 NOT NULL DEFAULT ferry.stamp()
  table_oid regclass NOT NULL
  row_id text NOT NULL
  created_at timestamp with time zone NOT NULL DEFAULT now()
  scope_table regclass
  scope_id text
  CONSTRAINT access_revocations_pkey PRIMARY KEY (user_id, xid, table_oid, row_id)
  CONSTRAINT access_revocations_user_id_fkey FOREIGN KEY (user_id) REFERENCES ferry.users(id) ON DELETE CASCADE
  GRANT SELECT TO ferry_app

TABLE ferry.access_scopes
  scope_table regclass NOT NULL
  member_table regclass NOT NULL
  member_column name NOT NULL
  read_through_scope boolean NOT NULL DEFAULT false
  CONSTRAINT access_scopes_pkey PRIMARY KEY (scope_table, member_table)
  GRANT SELECT TO ferry_app

TABLE ferry.idempotency_keys (row level security)
  user_id uuid NOT NULL DEFAULT ferry.current_user_id()
  key text NOT NULL
  request_hash bytea NOT NULL
  status integer
  response_headers jsonb
  response_body bytea
  created_at timestamp with time zone NOT NULL DEFAULT now()
  expires_at timestamp with time zone NOT NULL DEFAULT (now() + '24:00:00'::interval)
  CONSTRAINT idempotency_key_length CHECK (((length(key) >= 1) AND (length(key) <= 255)))
  CONSTRAINT idempotency_keys_pkey PRIMARY KEY (user_id, key)
  CONSTRAINT idempotency_keys_user_id_fkey FOREIGN KEY (user_id) REFERENCES ferry.users(id) ON DELETE CASCADE
  GRANT DELETE, INSERT, SELECT, UPDATE TO ferry_app

TABLE ferry.login_failures
  name text NOT NULL
  failures integer NOT NULL DEFAULT 0
  last_failure timestamp with time zone NOT NULL DEFAULT now()
  locked_until timestamp with time zone
  CONSTRAINT login_failures_pkey PRIMARY KEY (name)

TABLE ferry.operator_audit
  id bigint NOT NULL
  at timestamp with time zone NOT NULL DEFAULT clock_timestamp()
  operator_id uuid
  operator_name text NOT NULL
  action text NOT NULL
  target jsonb NOT NULL DEFAULT '{}'::jsonb
  status integer
  request_id text
  CONSTRAINT operator_audit_operator_id_fkey FOREIGN KEY (operator_id) REFERENCES ferry.operators(id) ON DELETE SET NULL
  CONSTRAINT operator_audit_pkey PRIMARY KEY (id)

TABLE ferry.operator_tokens
  token_hash bytea NOT NULL
  operator_id uuid NOT NULL
  created_at timestamp with time zone NOT NULL DEFAULT now()
  expires_at timestamp with time zone NOT NULL
  revoked boolean NOT NULL DEFAULT false
  CONSTRAINT operator_tokens_hash_length CHECK ((octet_length(token_hash) = 32))
  CONSTRAINT operator_tokens_operator_id_fkey FOREIGN KEY (operator_id) REFERENCES ferry.operators(id) ON DELETE CASCADE
  CONSTRAINT operator_tokens_pkey PRIMARY KEY (token_hash)

TABLE ferry.operators
  id uuid NOT NULL DEFAULT gen_random_uuid()
  name text NOT NULL
  password_hash text NOT NULL
  role text NOT NULL DEFAULT 'viewer'::text
  created_at timestamp with time zone NOT NULL DEFAULT now()
  CONSTRAINT operators_name_format CHECK ((name ~ '^[A-Za-z0-9_][A-Za-z0-9_.@+-]{0,127}$'::text))
  CONSTRAINT operators_name_key UNIQUE (name)
  CONSTRAINT operators_pkey PRIMARY KEY (id)
  CONSTRAINT operators_role CHECK ((role = ANY (ARRAY['viewer'::text, 'admin'::text])))

TABLE ferry.public_grants
  xid xid8 NOT NULL DEFAULT ferry.stamp()
  scope_table regclass NOT NULL
  scope_id text NOT NULL
  created_at timestamp with time zone NOT NULL DEFAULT now()
  CONSTRAINT public_grants_pkey PRIMARY KEY (scope_table, scope_id, xid)
  GRANT SELECT TO ferry_app

TABLE ferry.public_revocations
  xid xid8 NOT NULL DEFAULT ferry.stamp()
  scope_table regclass NOT NULL
  scope_id text NOT NULL
  table_oid regclass NOT NULL
  row_id text NOT NULL
  created_at timestamp with time zone NOT NULL DEFAULT now()
  CONSTRAINT public_revocations_pkey PRIMARY KEY (scope_table, scope_id, xid, table_oid, row_id)
  GRANT SELECT TO ferry_app

TABLE ferry.purge_horizon
  singleton boolean NOT NULL DEFAULT true
  horizon_xid xid8 NOT NULL DEFAULT '0'::xid8
  purged_at timestamp with time zone
  CONSTRAINT purge_horizon_pkey PRIMARY KEY (singleton)
  CONSTRAINT purge_horizon_singleton CHECK (singleton)
  GRANT SELECT TO ferry_app

TABLE ferry.refused_requests
  id bigint NOT NULL
  user_id uuid NOT NULL
  at timestamp with time zone NOT NULL
  method text NOT NULL
  path text NOT NULL
  status integer NOT NULL
  code text
  problem jsonb
  request_id text
  CONSTRAINT refused_requests_pkey PRIMARY KEY (id)
  CONSTRAINT refused_requests_user_id_fkey FOREIGN KEY (user_id) REFERENCES ferry.users(id) ON DELETE CASCADE

TABLE ferry.sync_rules
  table_oid regclass NOT NULL
  kind text NOT NULL
  rule_column name NOT NULL
  target_table regclass
  member_column name
  links name[] NOT NULL DEFAULT '{}'::name[]
  fixed name[] NOT NULL DEFAULT '{}'::name[]
  read_only name[] NOT NULL DEFAULT '{}'::name[]
  policies jsonb NOT NULL DEFAULT '{}'::jsonb
  created_at timestamp with time zone NOT NULL DEFAULT now()
  public_column name
  CONSTRAINT sync_rules_kind CHECK ((kind = ANY (ARRAY['owned'::text, 'child'::text, 'members'::text, 'grant'::text])))
  CONSTRAINT sync_rules_pkey PRIMARY KEY (table_oid)
  GRANT SELECT TO ferry_app

TABLE ferry.sync_streams
  name text NOT NULL
  scope_table regclass NOT NULL
  created_at timestamp with time zone NOT NULL DEFAULT now()
  CONSTRAINT sync_streams_name CHECK ((name ~ '^[a-z][a-z0-9_]{0,62}$'::text))
  CONSTRAINT sync_streams_pkey PRIMARY KEY (name)

TABLE ferry.synced_tables
  table_oid regclass NOT NULL
  schema_name name NOT NULL
  table_name name NOT NULL
  enabled_at timestamp with time zone NOT NULL DEFAULT now()
  CONSTRAINT synced_tables_pkey PRIMARY KEY (table_oid)
  GRANT SELECT TO ferry_app

TABLE ferry.tokens
  token_hash bytea NOT NULL
  user_id uuid NOT NULL
  created_at timestamp with time zone NOT NULL DEFAULT now()
  expires_at timestamp with time zone NOT NULL
  revoked boolean NOT NULL DEFAULT false
  last_used_at timestamp with time zone
  CONSTRAINT tokens_hash_length CHECK ((octet_length(token_hash) = 32))
  CONSTRAINT tokens_pkey PRIMARY KEY (token_hash)
  CONSTRAINT tokens_user_id_fkey FOREIGN KEY (user_id) REFERENCES ferry.users(id) ON DELETE CASCADE

TABLE ferry.user_lookups
  user_id uuid NOT NULL
  window_start timestamp with time zone NOT NULL
  lookups integer NOT NULL
  CONSTRAINT user_lookups_pkey PRIMARY KEY (user_id)
  CONSTRAINT user_lookups_user_id_fkey FOREIGN KEY (user_id) REFERENCES ferry.users(id) ON DELETE CASCADE

TABLE ferry.users
  id uuid NOT NULL DEFAULT gen_random_uuid()
  name text
  password_hash text
  created_at timestamp with time zone NOT NULL DEFAULT now()
  issuer text
  subject text
  disabled_at timestamp with time zone
  lookup_name text
  last_used_at timestamp with time zone
  CONSTRAINT users_identity_length CHECK (((octet_length(issuer) <= 2048) AND (octet_length(subject) <= 1024)))
  CONSTRAINT users_identity_unique UNIQUE (issuer, subject)
  CONSTRAINT users_kind CHECK ((((issuer IS NULL) AND (subject IS NULL) AND (name IS NOT NULL) AND (password_hash IS NOT NULL)) OR ((issuer IS NOT NULL) AND (subject IS NOT NULL) AND (password_hash IS NULL))))
  CONSTRAINT users_lookup_name CHECK (((lookup_name IS NULL) OR ((issuer IS NOT NULL) AND (lookup_name ~ '^[A-Za-z0-9_][A-Za-z0-9_.@+-]*$'::text) AND (octet_length(lookup_name) <= 320))))
  CONSTRAINT users_name_format CHECK ((name ~ '^[A-Za-z0-9_][A-Za-z0-9_.@+-]{0,127}$'::text))
  CONSTRAINT users_name_key UNIQUE (name)
  CONSTRAINT users_pkey PRIMARY KEY (id)

VIEW ferry.live_tokens AS
 SELECT t.token_hash,
    t.user_id,
    t.expires_at
   FROM ferry.tokens t
  WHERE ((NOT t.revoked) AND (t.expires_at > now()));
  GRANT SELECT TO ferry_app

VIEW ferry.sync_resources AS
 SELECT s.table_oid,
    n.nspname AS schema_name,
    c.relname AS table_name,
    s.enabled_at
   FROM ((ferry.synced_tables s
     JOIN pg_class c ON ((c.oid = (s.table_oid)::oid)))
     JOIN pg_namespace n ON ((n.oid = c.relnamespace)));
  GRANT SELECT TO ferry_app

SEQUENCE ferry.operator_audit_id_seq

SEQUENCE ferry.refused_requests_id_seq

SEQUENCE ferry.stamp_floor
  GRANT SELECT TO PUBLIC

SEQUENCE ferry.stamp_floor_taken
  GRANT SELECT, UPDATE TO PUBLIC

CREATE INDEX access_grants_created_at_idx ON ferry.access_grants USING btree (created_at);

CREATE UNIQUE INDEX access_grants_pkey ON ferry.access_grants USING btree (user_id, xid, scope_table, scope_id);

CREATE INDEX access_grants_xid_idx ON ferry.access_grants USING btree (xid);

CREATE INDEX access_revocations_created_at_idx ON ferry.access_revocations USING btree (created_at);

CREATE UNIQUE INDEX access_revocations_pkey ON ferry.access_revocations USING btree (user_id, xid, table_oid, row_id);

CREATE INDEX access_revocations_xid_idx ON ferry.access_revocations USING btree (xid);

CREATE UNIQUE INDEX access_scopes_pkey ON ferry.access_scopes USING btree (scope_table, member_table);

CREATE INDEX idempotency_keys_expires_at_idx ON ferry.idempotency_keys USING btree (expires_at);

CREATE UNIQUE INDEX idempotency_keys_pkey ON ferry.idempotency_keys USING btree (user_id, key);

CREATE UNIQUE INDEX login_failures_pkey ON ferry.login_failures USING btree (name);

CREATE UNIQUE INDEX operator_audit_pkey ON ferry.operator_audit USING btree (id);

CREATE INDEX operator_tokens_operator_id_idx ON ferry.operator_tokens USING btree (operator_id);

CREATE UNIQUE INDEX operator_tokens_pkey ON ferry.operator_tokens USING btree (token_hash);

CREATE UNIQUE INDEX operators_name_key ON ferry.operators USING btree (name);

CREATE UNIQUE INDEX operators_pkey ON ferry.operators USING btree (id);

CREATE INDEX public_grants_created_at_idx ON ferry.public_grants USING btree (created_at);

CREATE UNIQUE INDEX public_grants_pkey ON ferry.public_grants USING btree (scope_table, scope_id, xid);

CREATE INDEX public_revocations_created_at_idx ON ferry.public_revocations USING btree (created_at);

CREATE UNIQUE INDEX public_revocations_pkey ON ferry.public_revocations USING btree (scope_table, scope_id, xid, table_oid, row_id);

CREATE UNIQUE INDEX purge_horizon_pkey ON ferry.purge_horizon USING btree (singleton);

CREATE INDEX refused_requests_at_idx ON ferry.refused_requests USING btree (at);

CREATE UNIQUE INDEX refused_requests_pkey ON ferry.refused_requests USING btree (id);

CREATE INDEX refused_requests_user_id_idx ON ferry.refused_requests USING btree (user_id, id);

CREATE UNIQUE INDEX sync_rules_pkey ON ferry.sync_rules USING btree (table_oid);

CREATE UNIQUE INDEX sync_streams_pkey ON ferry.sync_streams USING btree (name);

CREATE UNIQUE INDEX synced_tables_pkey ON ferry.synced_tables USING btree (table_oid);

CREATE INDEX tokens_expires_at_idx ON ferry.tokens USING btree (expires_at);

CREATE UNIQUE INDEX tokens_pkey ON ferry.tokens USING btree (token_hash);

CREATE INDEX tokens_user_id_idx ON ferry.tokens USING btree (user_id);

CREATE UNIQUE INDEX user_lookups_pkey ON ferry.user_lookups USING btree (user_id);

CREATE UNIQUE INDEX users_identity_unique ON ferry.users USING btree (issuer, subject);

CREATE INDEX users_lookup_name_lower ON ferry.users USING btree (lower(lookup_name));

CREATE UNIQUE INDEX users_name_key ON ferry.users USING btree (name);

CREATE UNIQUE INDEX users_pkey ON ferry.users USING btree (id);

CREATE OR REPLACE FUNCTION ferry.access_changed_users(p_after xid8, p_limit integer)
 RETURNS uuid[]
 LANGUAGE sql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
    SELECT CASE WHEN count(*) >= p_limit THEN NULL ELSE coalesce(array_agg(DISTINCT u.user_id), '{}') END
      FROM (SELECT g.user_id FROM ferry.access_grants g WHERE g.xid > p_after
            UNION ALL
            SELECT r.user_id FROM ferry.access_revocations r WHERE r.xid > p_after
            LIMIT p_limit) u
$function$
;
GRANT EXECUTE TO ferry_app
COMMENT 'Users with an access grant or revocation after p_after, a frontier cursor''s xid (NULL for p_limit entries or more): they are answered by their own feed check.'

CREATE OR REPLACE FUNCTION ferry.access_log_notify()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    PERFORM ferry.hint(ferry.stamp()::text || ' 0 u ' || u.user_id::text)
       FROM (SELECT DISTINCT n.user_id FROM new_rows n) u;
    RETURN NULL;
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.authenticate(p_name text, p_password text)
 RETURNS TABLE(user_id uuid, retry_after_ms bigint)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'public', 'pg_temp'
AS $function$
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
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.base_type(p_type oid, p_typmod integer, OUT base_type oid, OUT base_typmod integer)
 RETURNS record
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
    SELECT c.type, c.typmod FROM ferry.type_chain(p_type, p_typmod) c ORDER BY c.depth DESC LIMIT 1;
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.changed_fields(p_new jsonb, p_old jsonb, p_revision bigint)
 RETURNS jsonb
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
 SET search_path TO 'pg_catalog', 'pg_temp'
RETURN (SELECT COALESCE(jsonb_object_agg(n.key, changed_fields.p_revision), '{}'::jsonb) AS "coalesce" FROM jsonb_each(changed_fields.p_new) n(key, value) WHERE ((n.key <> ALL (ARRAY['id'::text, 'revision'::text, 'last_modified'::text])) AND ("left"(n.key, 7) <> '_ferry_'::text) AND (n.value IS DISTINCT FROM (changed_fields.p_old -> n.key))))
;
GRANT EXECUTE TO PUBLIC

CREATE OR REPLACE FUNCTION ferry.claim(p_name text)
 RETURNS text
 LANGUAGE sql
 STABLE PARALLEL SAFE
RETURN (ferry.claims() ->> p_name)
;
GRANT EXECUTE TO PUBLIC

CREATE OR REPLACE FUNCTION ferry.claims()
 RETURNS jsonb
 LANGUAGE sql
 STABLE PARALLEL SAFE
RETURN COALESCE((NULLIF(current_setting('ferry.claims'::text, true), ''::text))::jsonb, '{}'::jsonb)
;
GRANT EXECUTE TO PUBLIC

CREATE OR REPLACE FUNCTION ferry.console_act_as(p_token_hash bytea, p_user uuid)
 RETURNS text
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_name text;
BEGIN
    PERFORM ferry.console_operator(p_token_hash);
    SELECT coalesce(u.name, u.lookup_name, u.subject) INTO v_name FROM ferry.users u WHERE u.id = p_user;
    IF v_name IS NOT NULL THEN
        PERFORM set_config('ferry.user_id', p_user::text, true);
    END IF;
    RETURN v_name;
END
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.console_audit(p_token_hash bytea, p_action text, p_target jsonb, p_status integer, p_request_id text)
 RETURNS bigint
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_id bigint;
BEGIN
    INSERT INTO ferry.operator_audit (operator_id, operator_name, action, target, status, request_id)
    SELECT s.operator_id, s.name, left(p_action, 64), coalesce(p_target, '{}'), p_status, left(p_request_id, 64)
      FROM ferry.operator_session(p_token_hash) s
    RETURNING id INTO v_id;
    RETURN v_id;
END
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.console_audit_log(p_token_hash bytea, p_limit integer)
 RETURNS TABLE(id bigint, at bigint, operator_name text, action text, target jsonb, status integer, request_id text)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    PERFORM ferry.console_operator(p_token_hash);
    RETURN QUERY
        SELECT a.id, floor(extract(epoch FROM a.at) * 1000)::bigint, a.operator_name, a.action, a.target, a.status,
               a.request_id
          FROM ferry.operator_audit a ORDER BY a.id DESC LIMIT greatest(1, least(p_limit, 1000));
END
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.console_audit_search(p_token_hash bytea, p_search text, p_before bigint, p_limit integer)
 RETURNS TABLE(id bigint, at bigint, operator_name text, action text, target jsonb, status integer, request_id text)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_pattern text := '%' || replace(replace(replace(coalesce(p_search, ''), '\', '\\'), '%', '\%'), '_', '\_') || '%';
BEGIN
    PERFORM ferry.console_operator(p_token_hash);
    RETURN QUERY
        SELECT a.id, floor(extract(epoch FROM a.at) * 1000)::bigint, a.operator_name, a.action, a.target, a.status,
               a.request_id
          FROM ferry.operator_audit a
         WHERE (p_before IS NULL OR a.id < p_before)
           AND (coalesce(p_search, '') = ''
                OR a.operator_name ILIKE v_pattern OR a.action ILIKE v_pattern
                OR a.target::text ILIKE v_pattern OR a.request_id ILIKE v_pattern)
         ORDER BY a.id DESC LIMIT greatest(1, least(p_limit, 1000));
END
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.console_condition(p_table regclass, p_filters jsonb, p_deleted text)
 RETURNS text
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_parts text[] := ARRAY['true'];
    v_key text;
    v_type text;
BEGIN
    IF p_deleted = 'live' THEN
        v_parts := v_parts || 'NOT t.is_deleted'::text;
    ELSIF p_deleted = 'deleted' THEN
        v_parts := v_parts || 't.is_deleted'::text;
    ELSIF p_deleted IS DISTINCT FROM 'any' THEN
        RAISE EXCEPTION USING ERRCODE = '22023', MESSAGE = 'deleted is any, live or deleted';
    END IF;
    FOR v_key IN SELECT jsonb_object_keys(coalesce(p_filters, '{}')) ORDER BY 1 LOOP
        -- The value read as the column's values' type (a domain's base type: a value its CHECK
        -- refuses matches nothing instead of failing), never cut to a varchar's length nor
        -- rounded to a numeric's precision.
        SELECT format_type(b.base_type, CASE WHEN b.base_type IN ('varchar'::regtype, 'numeric'::regtype) THEN NULL
                                             ELSE b.base_typmod END) INTO v_type
          FROM pg_attribute a CROSS JOIN LATERAL ferry.base_type(a.atttypid, a.atttypmod) b
         WHERE a.attrelid = p_table AND a.attname = v_key AND a.attnum > 0 AND NOT a.attisdropped;
        IF v_type IS NULL THEN
            RAISE EXCEPTION USING ERRCODE = '42703', MESSAGE = format('no column %s', left(v_key, 64));
        END IF;
        IF jsonb_typeof(p_filters -> v_key) = 'null' THEN
            v_parts := v_parts || format('t.%I IS NULL', v_key);
        ELSE
            v_parts := v_parts || format('t.%I = CAST($1 ->> %L AS %s)', v_key, v_key, v_type);
        END IF;
    END LOOP;
    RETURN array_to_string(v_parts, ' AND ');
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.console_oldest_transactions(p_token_hash bytea)
 RETURNS TABLE(xid text, pid integer, backend_type text, application_name text, role_name name, state text, age_ms bigint, query text, this_database boolean)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    PERFORM ferry.console_operator(p_token_hash);
    RETURN QUERY
        SELECT l.transactionid::text, l.pid, a.backend_type, a.application_name, a.usename, a.state,
               floor(extract(epoch FROM clock_timestamp() - a.xact_start) * 1000)::bigint, left(a.query, 200),
               a.datname = current_database()
          FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
         WHERE l.locktype = 'transactionid' AND l.mode = 'ExclusiveLock' AND l.granted
           AND l.pid IS DISTINCT FROM pg_backend_pid()
         ORDER BY age(l.transactionid) DESC LIMIT 5;
END
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.console_operator(p_token_hash bytea, p_admin boolean DEFAULT false)
 RETURNS uuid
 LANGUAGE sql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
RETURN (SELECT s.operator_id FROM ferry.operator_session(console_operator.p_token_hash, console_operator.p_admin) s(operator_id, name, role, expires_at))
;

CREATE OR REPLACE FUNCTION ferry.console_refusals(p_token_hash bytea, p_user uuid, p_limit integer)
 RETURNS TABLE(id bigint, at bigint, method text, path text, status integer, code text, problem jsonb, request_id text)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    PERFORM ferry.console_operator(p_token_hash);
    RETURN QUERY
        SELECT r.id, floor(extract(epoch FROM r.at) * 1000)::bigint, r.method, r.path, r.status, r.code, r.problem,
               r.request_id
          FROM ferry.refused_requests r WHERE r.user_id = p_user
         ORDER BY r.id DESC LIMIT greatest(1, least(p_limit, 50));
END
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.console_revoke_token(p_token_hash bytea, p_user uuid, p_token_id text)
 RETURNS text
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_hash bytea;
BEGIN
    PERFORM ferry.console_operator(p_token_hash, true);
    UPDATE ferry.tokens t SET revoked = true
     WHERE t.user_id = p_user AND NOT t.revoked AND encode(substring(t.token_hash FROM 1 FOR 8), 'hex') = lower(p_token_id)
    RETURNING t.token_hash INTO v_hash;
    RETURN v_hash::text;
END
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.console_revoke_user_tokens(p_token_hash bytea, p_user uuid)
 RETURNS text[]
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    PERFORM ferry.console_operator(p_token_hash, true);
    IF NOT EXISTS (SELECT 1 FROM ferry.users u WHERE u.id = p_user) THEN
        RETURN NULL;
    END IF;
    RETURN ferry.revoke_all_tokens_of(p_user);
END
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.console_row(p_token_hash bytea, p_table regclass, p_id text)
 RETURNS jsonb
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_row jsonb;
    v_id_type text;
BEGIN
    PERFORM ferry.console_operator(p_token_hash);
    IF NOT EXISTS (SELECT 1 FROM ferry.synced_tables s WHERE s.table_oid = p_table) THEN
        RAISE EXCEPTION USING ERRCODE = '42P01', MESSAGE = format('%s is not synced', p_table);
    END IF;
    SELECT format_type(a.atttypid, a.atttypmod) INTO v_id_type FROM pg_attribute a
     WHERE a.attrelid = p_table AND a.attname = 'id' AND NOT a.attisdropped;
    -- Delivered: below the feed's frontier, computed in this snapshot as a
    -- poll's is (not pg_snapshot_xmin, the cluster's oldest running xid, which
    -- a transaction of another database or one that wrote no synced row holds
    -- back while devices already have the row). The row is final there: a poll
    -- now serves it to a device whose cursor is before it (docs/changes-feed.md,
    -- "A frontier that falls back").
    EXECUTE format('SELECT %s || jsonb_build_object(''delivered'', t._ferry_xid < $2) '
                   'FROM %s t WHERE t.id = CAST($1 AS %s)', ferry.console_row_json(), p_table, v_id_type)
       INTO v_row USING p_id, ferry.feed_frontier();
    IF v_row IS NULL THEN
        RETURN NULL;
    END IF;
    RETURN v_row || jsonb_build_object(
        'writer_name', (SELECT u.name FROM ferry.users u WHERE u.id = (v_row ->> 'writer')::uuid),
        'revocations', (SELECT coalesce(jsonb_agg(jsonb_build_object(
                'user_id', r.user_id, 'user_name', u.name, 'xid', r.xid::text,
                'at', floor(extract(epoch FROM r.created_at) * 1000)::bigint) ORDER BY r.xid DESC), '[]')
              FROM (SELECT * FROM ferry.access_revocations r WHERE r.table_oid = p_table AND r.row_id = p_id
                     ORDER BY r.xid DESC LIMIT 50) r
              LEFT JOIN ferry.users u ON u.id = r.user_id),
        'grants', (SELECT coalesce(jsonb_agg(jsonb_build_object(
                'user_id', g.user_id, 'user_name', u.name, 'xid', g.xid::text,
                'at', floor(extract(epoch FROM g.created_at) * 1000)::bigint) ORDER BY g.xid DESC), '[]')
              FROM (SELECT * FROM ferry.access_grants g WHERE g.scope_table = p_table AND g.scope_id = p_id
                     ORDER BY g.xid DESC LIMIT 50) g
              LEFT JOIN ferry.users u ON u.id = g.user_id),
        'refusals', (SELECT coalesce(jsonb_agg(jsonb_build_object(
                'user_id', r.user_id, 'user_name', u.name, 'at', floor(extract(epoch FROM r.at) * 1000)::bigint,
                'method', r.method, 'path', r.path, 'status', r.status, 'code', r.code) ORDER BY r.id DESC), '[]')
              FROM (SELECT * FROM ferry.refused_requests r WHERE strpos(r.path, '/' || p_id) > 0
                     ORDER BY r.id DESC LIMIT 20) r
              LEFT JOIN ferry.users u ON u.id = r.user_id));
END
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.console_row_json()
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
RETURN 'jsonb_build_object(
    ''row'', to_jsonb(t) - ARRAY[''_ferry_xid'', ''_ferry_field_revisions'', ''_ferry_writer''],
    ''xid'', t._ferry_xid::text, ''writer'', t._ferry_writer, ''field_revisions'', t._ferry_field_revisions)'::text
;

CREATE OR REPLACE FUNCTION ferry.console_rows(p_token_hash bytea, p_table regclass, p_filters jsonb, p_deleted text, p_order text, p_descending boolean, p_limit integer)
 RETURNS TABLE(total bigint, ids bytea, data jsonb)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_condition text;
    v_order text;
    v_uuid boolean;
BEGIN
    PERFORM ferry.console_operator(p_token_hash);
    IF NOT EXISTS (SELECT 1 FROM ferry.synced_tables s WHERE s.table_oid = p_table) THEN
        RAISE EXCEPTION USING ERRCODE = '42P01', MESSAGE = format('%s is not synced', p_table);
    END IF;
    v_condition := ferry.console_condition(p_table, p_filters, p_deleted);
    IF p_order IS NOT NULL AND NOT EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = p_table
                                            AND a.attname = p_order AND a.attnum > 0 AND NOT a.attisdropped) THEN
        RAISE EXCEPTION USING ERRCODE = '42703', MESSAGE = format('no column %s', left(p_order, 64));
    END IF;
    v_order := CASE WHEN p_order IS NULL OR p_order = 'id' THEN '' ELSE format('t.%I %s, ', p_order,
               CASE WHEN p_descending THEN 'DESC' ELSE 'ASC' END) END
               || 't.id ' || CASE WHEN p_descending THEN 'DESC' ELSE 'ASC' END;
    SELECT a.atttypid = 'uuid'::regtype INTO v_uuid FROM pg_attribute a WHERE a.attrelid = p_table AND a.attname = 'id';
    IF v_uuid THEN
        RETURN QUERY EXECUTE format($q$
            WITH s AS MATERIALIZED (
              SELECT string_agg(uuid_send(t.id), ''::bytea ORDER BY %3$s) AS ids, count(*) AS total
                FROM %1$s t WHERE %2$s
            )
            SELECT s.total, CASE WHEN s.total > $2 THEN s.ids END,
                   (SELECT coalesce(jsonb_agg(%4$s ORDER BY x.o), '[]')
                      FROM unnest(ARRAY(
                             SELECT encode(substring(s.ids FROM g * 16 + 1 FOR 16), 'hex')::uuid
                               FROM generate_series(0, least(s.total::int, $2) - 1) AS g ORDER BY g
                           )) WITH ORDINALITY AS x(id, o)
                      JOIN %1$s t ON t.id = x.id)
              FROM s
            $q$, p_table, v_condition, v_order, ferry.console_row_json()) USING p_filters, p_limit;
    ELSE
        RETURN QUERY EXECUTE format($q$
            SELECT (SELECT count(*) FROM %1$s t WHERE %2$s), NULL::bytea,
                   (SELECT coalesce(jsonb_agg(r.j ORDER BY r.o), '[]') FROM (
                      SELECT %4$s AS j, row_number() OVER (ORDER BY %3$s) AS o
                        FROM %1$s t WHERE %2$s ORDER BY %3$s LIMIT $2) r)
            $q$, p_table, v_condition, v_order, ferry.console_row_json()) USING p_filters, p_limit;
    END IF;
END
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.console_rows_by_id(p_token_hash bytea, p_table regclass, p_ids uuid[])
 RETURNS jsonb
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_data jsonb;
BEGIN
    PERFORM ferry.console_operator(p_token_hash);
    IF NOT EXISTS (SELECT 1 FROM ferry.synced_tables s WHERE s.table_oid = p_table) THEN
        RAISE EXCEPTION USING ERRCODE = '42P01', MESSAGE = format('%s is not synced', p_table);
    END IF;
    EXECUTE format($q$
        SELECT coalesce(jsonb_agg(%2$s ORDER BY x.o), '[]')
          FROM unnest($1) WITH ORDINALITY AS x(id, o) JOIN %1$s t ON t.id = x.id
        $q$, p_table, ferry.console_row_json()) INTO v_data USING p_ids;
    RETURN v_data;
END
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.console_set_user_disabled(p_token_hash bytea, p_user uuid, p_disabled boolean)
 RETURNS text[]
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    PERFORM ferry.console_operator(p_token_hash, true);
    UPDATE ferry.users u SET disabled_at = CASE WHEN p_disabled THEN coalesce(u.disabled_at, now()) END
     WHERE u.id = p_user;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    IF NOT p_disabled THEN
        RETURN '{}';
    END IF;
    RETURN ferry.revoke_all_tokens_of(p_user);
END
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.console_table_stats(p_token_hash bytea)
 RETURNS TABLE(schema_name name, table_name name, row_count bigint, estimated boolean, tombstones bigint, oldest_tombstone bigint)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v record;
    v_estimate bigint;
BEGIN
    PERFORM ferry.console_operator(p_token_hash);
    FOR v IN SELECT s.table_oid, s.schema_name, s.table_name FROM ferry.sync_resources s ORDER BY 2, 3 LOOP
        SELECT greatest(c.reltuples, 0)::bigint INTO v_estimate FROM pg_class c WHERE c.oid = v.table_oid;
        schema_name := v.schema_name;
        table_name := v.table_name;
        estimated := v_estimate >= 100000;
        IF estimated THEN
            row_count := v_estimate;
        ELSE
            EXECUTE format('SELECT count(*) FROM %s', v.table_oid) INTO row_count;
        END IF;
        EXECUTE format('SELECT count(*), min(last_modified) FROM %s WHERE is_deleted', v.table_oid)
           INTO tombstones, oldest_tombstone;
        RETURN NEXT;
    END LOOP;
END
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.console_user_state(p_token_hash bytea, p_user uuid)
 RETURNS TABLE(disabled_at bigint, last_used_at bigint, lookup_name text)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    PERFORM ferry.console_operator(p_token_hash);
    RETURN QUERY SELECT floor(extract(epoch FROM u.disabled_at) * 1000)::bigint,
                        floor(extract(epoch FROM u.last_used_at) * 1000)::bigint, u.lookup_name
                   FROM ferry.users u WHERE u.id = p_user;
END
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.console_user_tokens(p_token_hash bytea, p_user uuid)
 RETURNS TABLE(token_id text, created_at bigint, expires_at bigint, revoked boolean, last_used_at bigint)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    PERFORM ferry.console_operator(p_token_hash);
    RETURN QUERY
        SELECT encode(substring(t.token_hash FROM 1 FOR 8), 'hex'), floor(extract(epoch FROM t.created_at) * 1000)::bigint,
               floor(extract(epoch FROM t.expires_at) * 1000)::bigint, t.revoked,
               floor(extract(epoch FROM t.last_used_at) * 1000)::bigint
          FROM ferry.tokens t WHERE t.user_id = p_user
         ORDER BY t.created_at DESC, t.token_hash LIMIT 200;
END
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.console_users(p_token_hash bytea, p_search text, p_limit integer)
 RETURNS TABLE(id uuid, name text, created_at bigint, live_tokens bigint, disabled boolean)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_pattern text := replace(replace(replace(coalesce(p_search, ''), '\', '\\'), '%', '\%'), '_', '\_');
BEGIN
    PERFORM ferry.console_operator(p_token_hash);
    RETURN QUERY
        SELECT u.id, coalesce(u.name, u.lookup_name, u.subject), floor(extract(epoch FROM u.created_at) * 1000)::bigint,
               (SELECT count(*) FROM ferry.tokens t WHERE t.user_id = u.id AND NOT t.revoked AND t.expires_at > now()),
               u.disabled_at IS NOT NULL
          FROM ferry.users u
         WHERE coalesce(p_search, '') = ''
            OR coalesce(u.name, u.lookup_name, u.subject) ILIKE '%' || v_pattern || '%'
            OR u.id::text = lower(p_search)
         ORDER BY NOT (coalesce(u.name, u.lookup_name, u.subject) LIKE v_pattern || '%'), coalesce(u.name, u.lookup_name, u.subject)
         LIMIT greatest(1, least(p_limit, 500));
END
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.constraint_columns(p_table regclass, p_name text)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
    SELECT coalesce(
        (SELECT jsonb_agg(a.attname ORDER BY a.attnum)
           FROM pg_attribute a
          WHERE a.attrelid = p_table
            AND a.attnum = ANY (coalesce(
                  (SELECT c.conkey FROM pg_constraint c WHERE c.conrelid = p_table AND c.conname = p_name LIMIT 1),
                  (SELECT i.indkey::int2[] FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
                    WHERE i.indrelid = p_table AND ic.relname = p_name LIMIT 1)))),
        (SELECT jsonb_agg(a.attname ORDER BY a.attnum)
           FROM pg_attribute a
          WHERE a.attrelid = p_table AND a.attnum > 0 AND NOT a.attisdropped
            AND EXISTS (SELECT 1 FROM ferry.type_chain(a.atttypid, a.atttypmod) d JOIN pg_constraint c ON c.contypid = d.type
                         WHERE c.contype = 'c' AND c.conname = p_name)),
        '[]'::jsonb);
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.create_operator(p_name text, p_password text, p_role text)
 RETURNS uuid
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'public', 'pg_temp'
AS $function$
DECLARE
    v_id uuid;
BEGIN
    IF p_password IS NULL OR p_password = '' THEN
        RAISE EXCEPTION USING ERRCODE = '22023', MESSAGE = 'password must not be empty';
    END IF;
    INSERT INTO ferry.operators (name, password_hash, role)
         VALUES (p_name, crypt(p_password, gen_salt('bf', 10)), p_role)
    RETURNING id INTO v_id;
    RETURN v_id;
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.create_user(p_name text, p_password text)
 RETURNS uuid
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'public', 'pg_temp'
AS $function$
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
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.current_user_id()
 RETURNS uuid
 LANGUAGE sql
 STABLE PARALLEL SAFE
RETURN (NULLIF(current_setting('ferry.user_id'::text, true), ''::text))::uuid
;
GRANT EXECUTE TO ferry_app
GRANT EXECUTE TO PUBLIC

CREATE OR REPLACE FUNCTION ferry.drop_sync_rules(p_table regclass)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_rule ferry.sync_rules;
    v_policy name;
BEGIN
    SELECT string_agg(r.table_oid::text, ', ' ORDER BY r.table_oid::text) INTO v_policy
      FROM ferry.sync_rules r WHERE r.kind = 'members' AND r.target_table = p_table;
    IF v_policy IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = '2BP01',
            MESSAGE = format('%s is shared by the members rule of %s: drop that rule first', p_table, v_policy),
            HINT = 'Drop the members rule, restate this one, then state the members rule again, in one migration.';
    END IF;
    SELECT string_agg(r.table_oid::text, ', ' ORDER BY r.table_oid::text) INTO v_policy
      FROM ferry.sync_rules r WHERE r.kind = 'grant' AND (r.target_table = p_table OR ferry.rules_through(r.table_oid) = p_table);
    IF v_policy IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = '2BP01',
            MESSAGE = format('%s is read or reached through by the grant rule of %s: drop that rule first', p_table, v_policy),
            HINT = 'Drop the grant rule, restate this one, then state the grant rule again, in one migration.';
    END IF;
    DELETE FROM ferry.sync_rules r WHERE r.table_oid = p_table RETURNING * INTO v_rule;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = '42704', MESSAGE = format('%s has no sync rule to drop', p_table);
    END IF;
    FOR v_policy IN SELECT p.polname FROM pg_policy p WHERE p.polrelid = p_table AND p.polname LIKE 'ferry\_rules\_%' LOOP
        EXECUTE format('DROP POLICY %I ON %s', v_policy, p_table);
    END LOOP;
    EXECUTE format('REVOKE ALL ON %s FROM ferry_app', p_table);
    EXECUTE format('DROP TRIGGER IF EXISTS zz_ferry_rules_members ON %s', p_table);
    EXECUTE format('DROP TRIGGER IF EXISTS zz_ferry_rules_grants ON %s', p_table);
    EXECUTE format('DROP TRIGGER IF EXISTS zz_ferry_rules_grant ON %s', p_table);
    DELETE FROM ferry.access_scopes s WHERE s.member_table = p_table
        OR (s.scope_table = v_rule.target_table AND v_rule.kind IN ('members', 'grant')
            AND NOT EXISTS (SELECT 1 FROM ferry.rules_scopes() d WHERE d.scope_table = s.scope_table AND d.member_table = s.member_table));
    -- The policies that called the scope-ids function are regenerated without it first.
    PERFORM ferry.refresh_sync_rules();
    IF v_rule.kind IN ('members', 'grant') THEN
        EXECUTE format('DROP FUNCTION IF EXISTS %s', ferry.rules_scope_ids_function(p_table));
    END IF;
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.enable_sync(p_table regclass)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    PERFORM ferry.enable_sync_base(p_table);
    PERFORM ferry.refresh_sync_trigger(p_table);
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.enable_sync_base(p_table regclass)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    PERFORM ferry.enable_sync_columns(p_table);
    IF NOT EXISTS (SELECT 1 FROM pg_attribute a
                    WHERE a.attrelid = p_table AND a.attname = '_ferry_writer' AND NOT a.attisdropped) THEN
        EXECUTE format('ALTER TABLE %s ADD COLUMN _ferry_writer uuid', p_table);
    END IF;
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.enable_sync_columns(p_table regclass)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
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
$function$
;
COMMENT 'ferry.enable_sync of 0001: columns, generic triggers, indexes, registration. ferry.enable_sync_base calls it.'

CREATE OR REPLACE FUNCTION ferry.external_user_id(p_issuer text, p_subject text)
 RETURNS uuid
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE STRICT
RETURN (SELECT (encode(set_byte(set_byte(substr(digest.h, 1, 16), 6, ((get_byte(digest.h, 6) & 15) | 128)), 8, ((get_byte(digest.h, 8) & 63) | 128)), 'hex'::text))::uuid AS encode FROM (SELECT sha256((((convert_to('ferry-user'::text, 'UTF8'::name) || convert_to(external_user_id.p_issuer, 'UTF8'::name)) || '\x00'::bytea) || convert_to(external_user_id.p_subject, 'UTF8'::name))) AS h) digest)
;
GRANT EXECUTE TO PUBLIC

CREATE OR REPLACE FUNCTION ferry.fail(p_problem json)
 RETURNS json
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    RAISE EXCEPTION USING ERRCODE = 'FR400', MESSAGE = 'request refused', DETAIL = p_problem::text;
END
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.feed_frontier()
 RETURNS xid8
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
    s pg_catalog.pg_snapshot := pg_catalog.pg_current_snapshot();
    v_kept text := pg_catalog.current_setting('ferry.frontier', true);
    v_frontier xid8;
BEGIN
    IF v_kept IS NOT NULL AND pg_catalog.split_part(v_kept, '@', 2) = s::text THEN
        RETURN pg_catalog.split_part(v_kept, '@', 1)::xid8;
    END IF;
    v_frontier := ferry.feed_frontier_of(s);
    PERFORM pg_catalog.set_config('ferry.frontier', v_frontier::text || '@' || s::text, true);
    RETURN v_frontier;
END
$function$
;
GRANT EXECUTE TO PUBLIC

CREATE OR REPLACE FUNCTION ferry.feed_frontier_of(s pg_snapshot)
 RETURNS xid8
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
    v_xmax xid8 := pg_catalog.pg_snapshot_xmax(s);
    v_cap xid8;
    v_frontier xid8;
    x xid8;
    v_held boolean := false;
    v_status pg_catalog.text;
BEGIN
    IF pg_catalog.pg_snapshot_xmin(s) = v_xmax THEN
        -- No transaction with an xid ran: whatever stamps later is at or above xmax.
        PERFORM ferry.pass_floor_stamps(v_xmax);
        RETURN v_xmax;
    END IF;
    -- What a transaction that advertises nothing now will stamp at least: the
    -- floor, read before any key is tried (raised to xmax, or as it is).
    IF ferry.raise_stamp_floor(v_xmax) THEN
        v_cap := v_xmax;
    ELSE
        v_cap := least(v_xmax, coalesce(pg_catalog.pg_sequence_last_value('ferry.stamp_floor'), 0)::text::xid8);
    END IF;
    v_frontier := v_xmax;
    BEGIN
        FOR x IN SELECT pg_catalog.pg_snapshot_xip(s) LOOP  -- in xid order
            v_held := pg_catalog.pg_try_advisory_lock(1181905529, ferry.stamp_key(x));
            IF v_held THEN
                PERFORM pg_catalog.pg_advisory_unlock(1181905529, ferry.stamp_key(x));
                v_held := false;
                v_status := pg_catalog.pg_xact_status(x);
                IF v_status = 'in progress' THEN
                    -- Alive, advertising nothing: it will stamp at or above the cap.
                    v_frontier := least(v_frontier, greatest(x, v_cap));
                    CONTINUE;
                ELSIF v_status = 'aborted' THEN
                    -- Rolled back: whatever it stamped is gone for good, and
                    -- it stamps nothing more. On a busy cluster (failed writes,
                    -- retries, other databases' work) this is the common way a
                    -- transaction ends between the snapshot and the look.
                    CONTINUE;
                END IF;
            END IF;
            -- Advertises (may have stamped at its xid), or committed (may have
            -- stamped, invisibly); every later one is above it.
            RETURN least(v_frontier, x);
        END LOOP;
    EXCEPTION WHEN OTHERS OR query_canceled THEN
        -- Never leave a key held past the call: a writer would wait on it.
        IF v_held THEN
            PERFORM pg_catalog.pg_advisory_unlock(1181905529, ferry.stamp_key(x));
        END IF;
        RAISE;
    END;
    IF v_frontier = v_xmax THEN
        PERFORM ferry.pass_floor_stamps(v_xmax);
    END IF;
    RETURN v_frontier;
END
$function$
;
GRANT EXECUTE TO PUBLIC

CREATE OR REPLACE FUNCTION ferry.feed_hold()
 RETURNS TABLE(xid text, kind text, held_ms bigint)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    s pg_snapshot := pg_current_snapshot();
    v_frontier xid8 := ferry.feed_frontier();
    v_holder xid8;
BEGIN
    IF v_frontier >= pg_snapshot_xmax(s) THEN
        RETURN;
    END IF;
    SELECT x INTO v_holder FROM pg_snapshot_xip(s) x WHERE x <= v_frontier
     ORDER BY x = v_frontier DESC, x LIMIT 1;
    v_holder := coalesce(v_holder, v_frontier);
    RETURN QUERY
        SELECT v_holder::text,
               CASE WHEN p.transaction IS NOT NULL THEN 'prepared'
                    WHEN a.pid IS NULL THEN 'ended'
                    WHEN a.state LIKE 'idle in transaction%' THEN 'idle_in_transaction'
                    WHEN EXISTS (SELECT 1 FROM pg_locks l
                                  WHERE l.pid = a.pid AND l.locktype = 'advisory' AND l.granted
                                    AND l.database = (SELECT d.oid FROM pg_database d WHERE d.datname = current_database())
                                    AND l.classid = 1181905529::oid AND l.objsubid = 2
                                    AND l.objid = (ferry.stamp_key(v_holder)::int8 & 4294967295)::oid) THEN 'synced_writer'
                    ELSE 'unsynced_writer' END,
               floor(extract(epoch FROM clock_timestamp() - coalesce(a.xact_start, p.prepared)) * 1000)::bigint
          FROM (SELECT 1) one
          LEFT JOIN pg_stat_activity a ON a.backend_xid = v_holder::xid
          LEFT JOIN pg_prepared_xacts p ON p.transaction = v_holder::xid AND p.database = current_database()
         LIMIT 1;
END
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.generated_trigger_function(p_name text, p_source text)
 RETURNS regprocedure
 LANGUAGE sql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
RETURN ferry.generated_trigger_function(p_name, p_source, true)
;

CREATE OR REPLACE FUNCTION ferry.generated_trigger_function(p_name text, p_source text, p_search_path boolean)
 RETURNS regprocedure
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_function oid;
    v_current text;
    v_config text[];
BEGIN
    SELECT p.oid, p.prosrc, p.proconfig INTO v_function, v_current, v_config FROM pg_proc p
     WHERE p.pronamespace = 'ferry'::regnamespace AND p.proname = p_name AND p.pronargs = 0;
    IF v_function IS NULL OR v_current IS DISTINCT FROM p_source OR (v_config IS NOT NULL) IS DISTINCT FROM p_search_path THEN
        EXECUTE format('CREATE OR REPLACE FUNCTION ferry.%I() RETURNS trigger LANGUAGE plpgsql %s AS %L', p_name,
                       CASE WHEN p_search_path THEN 'SET search_path = pg_catalog, ferry, pg_temp' ELSE '' END, p_source);
        EXECUTE format('REVOKE EXECUTE ON FUNCTION ferry.%I() FROM PUBLIC', p_name);
        v_function := format('ferry.%I()', p_name)::regprocedure;
    END IF;
    RETURN v_function;
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.hint(p_hint text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    v_hints pg_catalog.text;
BEGIN
    IF pg_catalog.current_setting('ferry.hint_mode', true) IS DISTINCT FROM 'collect' THEN
        PERFORM pg_catalog.pg_notify('ferry_changes', p_hint);
        RETURN;
    END IF;
    v_hints := COALESCE(pg_catalog.current_setting('ferry.hints', true), '');
    IF pg_catalog.strpos(E'\n' || v_hints, E'\n' || p_hint || E'\n') > 0 THEN
        RETURN;
    END IF;
    IF pg_catalog.octet_length(v_hints) > 65536 THEN
        PERFORM pg_catalog.pg_notify('ferry_changes', p_hint);
        RETURN;
    END IF;
    v_hints := pg_catalog.set_config('ferry.hints', v_hints || p_hint || E'\n', true);
END
$function$
;
GRANT EXECUTE TO PUBLIC

CREATE OR REPLACE FUNCTION ferry.idempotency_claim(p_key text)
 RETURNS TABLE(state text, request_hash bytea, status integer, response_headers jsonb, response_body bytea)
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_user uuid := ferry.current_user_id();
    v_row ferry.idempotency_keys;
BEGIN
    IF v_user IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'FR401', MESSAGE = 'no caller';
    END IF;
    IF NOT pg_try_advisory_xact_lock(hashtextextended('ferry.idempotency/' || v_user::text || '/' || p_key, 0)) THEN
        RETURN QUERY SELECT 'in_use'::text, NULL::bytea, NULL::int, NULL::jsonb, NULL::bytea;
        RETURN;
    END IF;
    DELETE FROM ferry.idempotency_keys k WHERE k.user_id = v_user AND k.key = p_key AND k.expires_at <= now();
    SELECT * INTO v_row FROM ferry.idempotency_keys k WHERE k.user_id = v_user AND k.key = p_key;
    IF NOT FOUND THEN
        RETURN QUERY SELECT 'new'::text, NULL::bytea, NULL::int, NULL::jsonb, NULL::bytea;
    ELSIF v_row.status IS NULL THEN
        RETURN QUERY SELECT 'in_use'::text, NULL::bytea, NULL::int, NULL::jsonb, NULL::bytea;
    ELSE
        RETURN QUERY SELECT 'stored'::text, v_row.request_hash, v_row.status, v_row.response_headers, v_row.response_body;
    END IF;
END
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.idempotency_store(p_key text, p_request_hash bytea, p_status integer, p_headers jsonb, p_body bytea, p_ttl_hours integer)
 RETURNS void
 LANGUAGE sql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
BEGIN ATOMIC
 INSERT INTO ferry.idempotency_keys (user_id, key, request_hash, status, response_headers, response_body, expires_at)
   VALUES (ferry.current_user_id(), idempotency_store.p_key, idempotency_store.p_request_hash, idempotency_store.p_status, idempotency_store.p_headers, idempotency_store.p_body, (now() + make_interval(hours => idempotency_store.p_ttl_hours)));
END
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.ids_ahead_of_cluster()
 RETURNS TABLE(object text, id text, next_xid text)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_kept text[] := ARRAY[]::text[];
    v_ids xid8[] := ARRAY[]::xid8[];
    v_table regclass;
    v_max xid8;
    v_xmax xid8;
BEGIN
    v_kept := v_kept || 'ferry.stamp_floor'::text || 'ferry.stamp_floor_taken'::text || 'ferry.purge_horizon'::text;
    v_ids := v_ids || coalesce(pg_sequence_last_value('ferry.stamp_floor'), 0)::text::xid8
                   || coalesce(pg_sequence_last_value('ferry.stamp_floor_taken'), 0)::text::xid8
                   || (SELECT h.horizon_xid FROM ferry.purge_horizon h);
    -- Only tables that exist with the column: a dropped table's row names an oid.
    FOR v_table IN
        SELECT t.table_oid FROM ferry.synced_tables t
          JOIN pg_attribute a ON a.attrelid = t.table_oid AND a.attname = '_ferry_xid' AND NOT a.attisdropped
         ORDER BY t.table_oid::regclass::text
    LOOP
        EXECUTE format('SELECT max(_ferry_xid) FROM %s', v_table) INTO v_max;
        v_kept := v_kept || v_table::text;
        v_ids := v_ids || coalesce(v_max, '0'::xid8);
    END LOOP;
    SELECT pg_snapshot_xmax(pg_current_snapshot()) INTO v_xmax;
    RETURN QUERY SELECT k.object, k.id::text, v_xmax::text
                   FROM unnest(v_kept, v_ids) AS k(object, id)
                  WHERE k.id > v_xmax;
END
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.invalid_token()
 RETURNS text
 LANGUAGE plpgsql
AS $function$
BEGIN
    RAISE EXCEPTION USING ERRCODE = 'FR401', MESSAGE = 'invalid token';
END
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.issue_operator_token(p_operator uuid, p_token_hash bytea, p_ttl_seconds integer)
 RETURNS timestamp with time zone
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_expires timestamptz;
BEGIN
    IF p_ttl_seconds IS NULL OR p_ttl_seconds <= 0 THEN
        RAISE EXCEPTION USING ERRCODE = '22023', MESSAGE = 'token ttl must be positive';
    END IF;
    DELETE FROM ferry.operator_tokens t WHERE t.operator_id = p_operator AND (t.revoked OR t.expires_at < now());
    INSERT INTO ferry.operator_tokens (token_hash, operator_id, expires_at)
         VALUES (p_token_hash, p_operator, now() + make_interval(secs => p_ttl_seconds))
    RETURNING expires_at INTO v_expires;
    RETURN v_expires;
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.issue_token(p_user_id uuid, p_token_hash bytea, p_ttl_seconds integer)
 RETURNS timestamp with time zone
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_expires timestamptz;
    v_disabled timestamptz;
BEGIN
    IF p_ttl_seconds IS NULL OR p_ttl_seconds <= 0 THEN
        RAISE EXCEPTION USING ERRCODE = '22023', MESSAGE = 'token ttl must be positive';
    END IF;
    SELECT u.disabled_at INTO v_disabled FROM ferry.users u WHERE u.id = p_user_id FOR SHARE;
    IF v_disabled IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'FR403', MESSAGE = 'this user is disabled';
    END IF;
    INSERT INTO ferry.tokens (token_hash, user_id, expires_at)
         VALUES (p_token_hash, p_user_id, now() + make_interval(secs => p_ttl_seconds))
    RETURNING expires_at INTO v_expires;
    RETURN v_expires;
END
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.item_errors(p_table regclass, p_index integer, p_id jsonb, p_state text, p_constraint text, p_column text, p_message text)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
    WITH f AS (
        SELECT CASE
                 WHEN p_state = '42501' THEN '[]'::jsonb
                 WHEN p_column <> '' THEN jsonb_build_array(p_column)
                 WHEN p_constraint <> '' THEN ferry.constraint_columns(p_table, p_constraint)
                 ELSE '[]'::jsonb
               END AS fields,
               CASE p_state
                 WHEN '23514' THEN 'check_violation'
                 WHEN '23505' THEN 'unique_violation'
                 WHEN '23503' THEN 'not_found'
                 WHEN '23502' THEN 'not_null'
                 WHEN '23P01' THEN 'exclusion_violation'
                 WHEN '42501' THEN CASE WHEN p_message LIKE '%row-level security%' THEN 'not_allowed' ELSE 'not_granted' END
                 ELSE 'invalid_value'
               END AS reason
    )
    SELECT coalesce(jsonb_agg(jsonb_build_object(
               'index', p_index, 'id', p_id, 'status', 422, 'code', 'validation_failed',
               'field', x.field, 'reason', f.reason, 'detail', p_message)), '[]'::jsonb)
      FROM f
      CROSS JOIN LATERAL (
          SELECT value AS field FROM jsonb_array_elements(f.fields)
          UNION ALL SELECT 'null'::jsonb WHERE jsonb_array_length(f.fields) = 0
      ) x;
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.lookup_user(p_name text)
 RETURNS TABLE(id uuid, name text, retry_after_seconds integer)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    c_window constant interval := interval '10 minutes';
    c_ration constant int := 30;
    v_caller uuid := ferry.current_user_id();
    v_start timestamptz;
    v_count int;
    v_ids uuid[];
    v_names text[];
BEGIN
    IF v_caller IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'FR401', MESSAGE = 'invalid token';
    END IF;
    INSERT INTO ferry.user_lookups AS l (user_id, window_start, lookups) VALUES (v_caller, now(), 1)
    ON CONFLICT (user_id) DO UPDATE
        SET window_start = CASE WHEN l.window_start <= now() - c_window THEN now() ELSE l.window_start END,
            lookups = CASE WHEN l.window_start <= now() - c_window THEN 1 ELSE l.lookups + 1 END
    RETURNING l.window_start, l.lookups INTO v_start, v_count;
    IF v_count > c_ration THEN
        RETURN QUERY SELECT NULL::uuid, NULL::text,
            greatest(1, ceil(extract(epoch FROM v_start + c_window - now())))::int;
        RETURN;
    END IF;
    SELECT array_agg(m.id), array_agg(m.found) INTO v_ids, v_names
      FROM (SELECT u.id, coalesce(u.name, u.lookup_name) AS found FROM ferry.users u
             WHERE (u.name = p_name OR lower(u.lookup_name) = lower(p_name)) AND ferry.user_findable(u)
             LIMIT 2) m;
    IF cardinality(v_ids) = 1 THEN
        RETURN QUERY SELECT v_ids[1], v_names[1], NULL::int;
    ELSE
        RETURN QUERY SELECT NULL::uuid, NULL::text, NULL::int;
    END IF;
END
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.me()
 RETURNS TABLE(id uuid, name text, created_at bigint)
 LANGUAGE sql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
    SELECT u.id, u.name, floor(extract(epoch FROM u.created_at) * 1000)::bigint
      FROM ferry.users u WHERE u.id = ferry.current_user_id();
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.misfit_fields(p_table regclass, p_item jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    v_field record;
    v_misfits jsonb := '[]'::jsonb;
BEGIN
    IF jsonb_typeof(p_item) IS DISTINCT FROM 'object' THEN
        RETURN v_misfits;
    END IF;
    FOR v_field IN
        SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, e.value
          FROM jsonb_each(p_item) e
          JOIN pg_attribute a ON a.attrelid = p_table AND a.attname = e.key AND a.attnum > 0 AND NOT a.attisdropped
         WHERE jsonb_typeof(e.value) <> 'null'
         ORDER BY a.attnum
    LOOP
        BEGIN
            EXECUTE format('SELECT r.v FROM jsonb_to_record($1) AS r(v %s)', v_field.type)
              USING jsonb_build_object('v', v_field.value);
        EXCEPTION WHEN data_exception THEN
            v_misfits := v_misfits || to_jsonb(v_field.name::text);
        END;
    END LOOP;
    RETURN v_misfits;
END
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.now_ms()
 RETURNS bigint
 LANGUAGE sql
 PARALLEL SAFE
RETURN (floor((EXTRACT(epoch FROM clock_timestamp()) * (1000)::numeric)))::bigint
;
GRANT EXECUTE TO ferry_app
GRANT EXECUTE TO PUBLIC

CREATE OR REPLACE FUNCTION ferry.operator_session(p_token_hash bytea, p_admin boolean DEFAULT false)
 RETURNS TABLE(operator_id uuid, name text, role text, expires_at bigint)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_role text;
BEGIN
    RETURN QUERY
        SELECT o.id, o.name, o.role, floor(extract(epoch FROM t.expires_at) * 1000)::bigint
          FROM ferry.operator_tokens t JOIN ferry.operators o ON o.id = t.operator_id
         WHERE t.token_hash = p_token_hash AND NOT t.revoked AND t.expires_at > now();
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'FR401', MESSAGE = 'invalid console token';
    END IF;
    IF p_admin THEN
        SELECT o.role INTO v_role FROM ferry.operator_tokens t JOIN ferry.operators o ON o.id = t.operator_id
         WHERE t.token_hash = p_token_hash;
        IF v_role <> 'admin' THEN
            RAISE EXCEPTION USING ERRCODE = 'FR403', MESSAGE = 'this needs an admin operator';
        END IF;
    END IF;
END
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.operator_sign_in(p_name text, p_password text, p_token_hash bytea, p_ttl_seconds integer)
 RETURNS TABLE(operator_id uuid, role text, expires_at bigint, retry_after_ms bigint)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'public', 'pg_temp'
AS $function$
DECLARE
    c_dummy_hash constant text := '$2a$10$IhNVJtQybKF.pvixakqnA.JkYM6k4/hsbDcjHGCE4Mx85HGhrdZKq';
    c_free_failures constant int := 4;
    c_max_lock_ms constant bigint := 300000;
    v_key text := 'operator:' || coalesce(p_name, '');
    v_locked_until timestamptz;
    v_operator ferry.operators;
    v_failures int;
BEGIN
    IF p_name IS NULL OR p_password IS NULL OR length(p_name) > 256 THEN
        PERFORM crypt(coalesce(p_password, ''), c_dummy_hash);
        RETURN QUERY SELECT NULL::uuid, NULL::text, NULL::bigint, 0::bigint;
        RETURN;
    END IF;
    SELECT f.locked_until INTO v_locked_until FROM ferry.login_failures f WHERE f.name = v_key;
    IF v_locked_until IS NOT NULL AND v_locked_until > clock_timestamp() THEN
        RETURN QUERY SELECT NULL::uuid, NULL::text, NULL::bigint,
            greatest(1, ceil(extract(epoch FROM v_locked_until - clock_timestamp()) * 1000))::bigint;
        RETURN;
    END IF;
    SELECT * INTO v_operator FROM ferry.operators o WHERE o.name = p_name;
    IF v_operator.id IS NOT NULL AND crypt(p_password, v_operator.password_hash) = v_operator.password_hash THEN
        DELETE FROM ferry.login_failures f WHERE f.name = v_key;
        RETURN QUERY SELECT v_operator.id, v_operator.role,
            floor(extract(epoch FROM ferry.issue_operator_token(v_operator.id, p_token_hash, p_ttl_seconds)) * 1000)::bigint,
            0::bigint;
        RETURN;
    END IF;
    IF v_operator.id IS NULL THEN
        PERFORM crypt(p_password, c_dummy_hash);
    END IF;
    INSERT INTO ferry.login_failures AS f (name, failures, last_failure)
         VALUES (v_key, 1, clock_timestamp())
    ON CONFLICT (name) DO UPDATE SET failures = f.failures + 1, last_failure = excluded.last_failure
    RETURNING f.failures INTO v_failures;
    IF v_failures > c_free_failures THEN
        UPDATE ferry.login_failures f
           SET locked_until = clock_timestamp() + make_interval(secs =>
                   least(c_max_lock_ms, 1000::bigint << least(v_failures - c_free_failures - 1, 20)) / 1000.0)
         WHERE f.name = v_key;
    END IF;
    RETURN QUERY SELECT NULL::uuid, NULL::text, NULL::bigint, 0::bigint;
END
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.operator_sign_out(p_token_hash bytea)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    PERFORM ferry.console_operator(p_token_hash);
    UPDATE ferry.operator_tokens SET revoked = true WHERE token_hash = p_token_hash;
END
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.pass_floor_stamps(p_xmax xid8)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF coalesce(pg_catalog.pg_sequence_last_value('ferry.stamp_floor_taken'), 0) >= p_xmax::text::int8
       AND pg_catalog.current_setting('transaction_read_only') = 'off' AND NOT pg_catalog.pg_is_in_recovery() THEN
        PERFORM pg_catalog.pg_current_xact_id();
    END IF;
END
$function$
;
GRANT EXECUTE TO PUBLIC

CREATE OR REPLACE FUNCTION ferry.point_trigger(p_table regclass, p_trigger text, p_events text, p_level text, p_function regprocedure)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_trigger t
                    WHERE t.tgrelid = p_table AND t.tgname = p_trigger AND t.tgfoid = p_function) THEN
        EXECUTE format('CREATE OR REPLACE TRIGGER %I %s ON %s %s EXECUTE FUNCTION %s',
                       p_trigger, p_events, p_table, p_level, p_function);
    END IF;
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.public_reads()
 RETURNS boolean
 LANGUAGE sql
 STABLE PARALLEL SAFE
 SET search_path TO 'pg_catalog', 'pg_temp'
RETURN (COALESCE(current_setting('ferry.public_reads'::text, true), ''::text) = 'on'::text)
;
GRANT EXECUTE TO PUBLIC
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.purge_access_log(p_older_than_ms bigint, p_batch integer)
 RETURNS bigint
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_cutoff timestamptz;
    v_log text;
    v_max xid8;
    v_n bigint;
    v_total bigint := 0;
BEGIN
    IF p_older_than_ms IS NULL OR p_older_than_ms < 0 OR p_batch IS NULL OR p_batch < 1 THEN
        RAISE EXCEPTION USING ERRCODE = '22023',
            MESSAGE = 'purge_access_log needs a non-negative age and a positive batch size';
    END IF;
    v_cutoff := clock_timestamp() - make_interval(secs => p_older_than_ms / 1000.0);
    -- The logs' names are this function's own constants, never input.
    FOREACH v_log IN ARRAY ARRAY['access_grants', 'access_revocations', 'public_grants', 'public_revocations'] LOOP
        EXIT WHEN v_total >= p_batch;
        -- The victims are picked once (MATERIALIZED): see 0004.
        EXECUTE format(
            'WITH v AS MATERIALIZED (SELECT ctid FROM ferry.%1$I WHERE created_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED),
                  d AS (DELETE FROM ferry.%1$I a USING v WHERE a.ctid = v.ctid RETURNING a.xid)
             SELECT count(*), max(xid) FROM d', v_log)
            INTO v_n, v_max USING v_cutoff, p_batch - v_total;
        v_total := v_total + v_n;
        IF v_max IS NOT NULL THEN
            UPDATE ferry.purge_horizon SET horizon_xid = greatest(horizon_xid, v_max), purged_at = now();
        END IF;
    END LOOP;
    RETURN v_total;
END
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.purge_tombstones(p_older_than_ms bigint, p_batch integer)
 RETURNS bigint
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
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
        -- The victims are picked once (MATERIALIZED): as an IN (subquery) the
        -- LIMIT could be re-evaluated per scan and delete more than a batch.
        EXECUTE format($f$
            WITH victims AS MATERIALIZED (
                SELECT id FROM %1$s
                 WHERE is_deleted AND last_modified < $1
                 LIMIT $2 FOR UPDATE SKIP LOCKED),
            d AS (
                DELETE FROM %1$s t USING victims v
                 WHERE t.id = v.id
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
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.raise_stamp_floor(p_to xid8)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_to int8 := least(p_to, pg_snapshot_xmax(pg_current_snapshot()))::text::int8;
BEGIN
    IF coalesce(pg_sequence_last_value('ferry.stamp_floor'), 0) >= p_to::text::int8 THEN
        RETURN true;
    END IF;
    IF v_to < p_to::text::int8 OR current_setting('transaction_read_only') = 'on' OR pg_is_in_recovery()
       OR NOT pg_try_advisory_lock(1181905530, 0) THEN
        RETURN false;
    END IF;
    BEGIN
        IF coalesce(pg_sequence_last_value('ferry.stamp_floor'), 0) < v_to THEN
            PERFORM setval('ferry.stamp_floor', v_to);
        END IF;
    EXCEPTION WHEN OTHERS OR query_canceled THEN
        PERFORM pg_advisory_unlock(1181905530, 0);
        RAISE;
    END;
    PERFORM pg_advisory_unlock(1181905530, 0);
    RETURN true;
END
$function$
;
GRANT EXECUTE TO PUBLIC

CREATE OR REPLACE FUNCTION ferry.read_paths(p_schema name)
 RETURNS TABLE(table_name name, kind text, rule_column name, target_name name, member_column name, scope_ids_function text, rules_only boolean, through_name name)
 LANGUAGE sql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
    SELECT c.relname, r.kind, r.rule_column, t.relname, r.member_column,
           CASE WHEN r.kind IN ('members', 'grant') THEN ferry.rules_scope_ids_function(r.table_oid) END,
           c.relrowsecurity AND NOT EXISTS (
               SELECT 1 FROM pg_policy p
                WHERE p.polrelid = r.table_oid AND p.polpermissive AND p.polcmd IN ('r', '*')
                  AND p.polname NOT LIKE 'ferry\_rules\_%'),
           (SELECT h.relname FROM pg_class h WHERE h.oid = ferry.rules_through(r.table_oid) AND h.relnamespace = c.relnamespace)
      FROM ferry.sync_rules r
      JOIN pg_class c ON c.oid = r.table_oid
      JOIN pg_namespace n ON n.oid = c.relnamespace
      LEFT JOIN pg_class t ON t.oid = r.target_table
     WHERE n.nspname = p_schema
       AND (t.oid IS NULL OR t.relnamespace = c.relnamespace)
     ORDER BY 1
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.record_access_grant(p_user uuid, p_scope regclass, p_scope_id text)
 RETURNS void
 LANGUAGE sql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
    INSERT INTO ferry.access_grants (user_id, scope_table, scope_id)
         VALUES (p_user, p_scope, p_scope_id)
    ON CONFLICT DO NOTHING;
$function$
;

CREATE OR REPLACE FUNCTION ferry.record_access_revocation(p_user uuid, p_scope regclass, p_scope_id text)
 RETURNS void
 LANGUAGE sql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
    SELECT ferry.record_access_revocation(p_user, p_scope, p_scope_id, false);
$function$
;

CREATE OR REPLACE FUNCTION ferry.record_access_revocation(p_user uuid, p_scope regclass, p_scope_id text, p_through_grant boolean)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_member record;
    v_type text;
BEGIN
    SELECT format_type(a.atttypid, a.atttypmod) INTO v_type
      FROM pg_attribute a WHERE a.attrelid = p_scope AND a.attname = 'id' AND NOT a.attisdropped;
    EXECUTE format('SELECT 1 FROM %s WHERE id = CAST($1 AS %s) FOR UPDATE', p_scope, v_type) USING p_scope_id;
    FOR v_member IN
        SELECT s.member_table, s.member_column, format_type(a.atttypid, a.atttypmod) AS column_type
          FROM ferry.access_scopes s
          JOIN pg_attribute a ON a.attrelid = s.member_table AND a.attname = s.member_column AND NOT a.attisdropped
         WHERE s.scope_table = p_scope
           AND NOT EXISTS (SELECT 1 FROM ferry.sync_rules m
                            WHERE m.table_oid = s.member_table AND m.kind = 'members' AND m.target_table = p_scope
                              AND (p_through_grant OR ferry.rules_private_members(m.table_oid)))
    LOOP
        EXECUTE format($f$
            INSERT INTO ferry.access_revocations (user_id, table_oid, row_id, scope_table, scope_id)
            SELECT $1, %2$L::regclass, m.id::text, $3, $2 FROM %1$s m WHERE m.%3$I = CAST($2 AS %4$s)
            ON CONFLICT DO NOTHING
        $f$, v_member.member_table, v_member.member_table::oid, v_member.member_column, v_member.column_type)
        USING p_user, p_scope_id, p_scope;
    END LOOP;
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.record_refusals(p_entries jsonb)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_count int;
    v_users uuid[];
BEGIN
    WITH e AS (
        SELECT x.*, o.n FROM jsonb_array_elements(p_entries) WITH ORDINALITY AS o(entry, n)
         CROSS JOIN LATERAL jsonb_to_record(o.entry)
            AS x(user_id uuid, token_hash text, at bigint, method text, path text, status int, code text,
                 problem jsonb, request_id text)
    ), i AS (
        -- In the entries' order, so that ids follow the refusals' order.
        INSERT INTO ferry.refused_requests (user_id, at, method, path, status, code, problem, request_id)
        SELECT coalesce(e.user_id, t.user_id), to_timestamp(e.at / 1000.0), left(e.method, 16), left(e.path, 1024),
               e.status, left(coalesce(e.code, e.problem ->> 'code'), 64), e.problem, left(e.request_id, 64)
          FROM e LEFT JOIN ferry.tokens t ON e.user_id IS NULL AND t.token_hash = e.token_hash::bytea
         WHERE coalesce(e.user_id, t.user_id) IS NOT NULL
           AND EXISTS (SELECT 1 FROM ferry.users u WHERE u.id = coalesce(e.user_id, t.user_id))
         ORDER BY e.n
        RETURNING user_id
    )
    SELECT count(*), array_agg(DISTINCT i.user_id) INTO v_count, v_users FROM i;
    DELETE FROM ferry.refused_requests r
     WHERE r.user_id = ANY (v_users)
       AND r.id < (SELECT k.id FROM ferry.refused_requests k WHERE k.user_id = r.user_id
                    ORDER BY k.id DESC OFFSET 49 LIMIT 1);
    DELETE FROM ferry.refused_requests r
     WHERE r.id IN (SELECT o.id FROM ferry.refused_requests o WHERE o.at < now() - interval '30 days' LIMIT 1000);
    RETURN v_count;
END
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.record_token_uses(p_uses jsonb)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_count int;
BEGIN
    WITH u AS (
        SELECT x.hash::bytea AS hash, max(to_timestamp(x.at / 1000.0)) AS at
          FROM jsonb_to_recordset(p_uses) AS x(hash text, at bigint)
         GROUP BY 1
    )
    UPDATE ferry.tokens t SET last_used_at = u.at
      FROM u WHERE t.token_hash = u.hash AND (t.last_used_at IS NULL OR t.last_used_at < u.at);
    GET DIAGNOSTICS v_count = ROW_COUNT;
    RETURN v_count;
END
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.record_user_uses(p_uses jsonb)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_count int;
BEGIN
    WITH s AS (
        SELECT x."user" AS id, max(to_timestamp(x.at / 1000.0)) AS at
          FROM jsonb_to_recordset(p_uses) AS x("user" uuid, at bigint)
         GROUP BY 1
    )
    UPDATE ferry.users u SET last_used_at = s.at
      FROM s WHERE u.id = s.id AND (u.last_used_at IS NULL OR u.last_used_at < s.at);
    GET DIAGNOSTICS v_count = ROW_COUNT;
    RETURN v_count;
END
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.reference_columns(p_table regclass)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
    SELECT coalesce(jsonb_agg(DISTINCT a.attname), '[]'::jsonb)
      FROM pg_constraint c
      JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey)
     WHERE c.conrelid = p_table AND c.contype = 'f';
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.refresh_sync_notify(p_table regclass)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_function regprocedure := ferry.generated_trigger_function('sync_notify_' || p_table::oid, ferry.sync_notify_source(p_table), false);
    v_row record;
    v_current text;
BEGIN
    PERFORM ferry.point_trigger(p_table, 'zz_ferry_notify_insert', 'AFTER INSERT',
        'REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT', v_function);
    -- A table whose update trigger hints its rows (ferry.sync_row_hints_source) has no
    -- UPDATE statement trigger; the others keep it.
    IF NOT ferry.sync_hints_rows(p_table) THEN
        PERFORM ferry.point_trigger(p_table, 'zz_ferry_notify_update', 'AFTER UPDATE',
            'REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT', v_function);
    ELSIF EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgrelid = p_table AND t.tgname = 'zz_ferry_notify_update') THEN
        EXECUTE format('DROP TRIGGER zz_ferry_notify_update ON %s', p_table);
    END IF;
    FOR v_row IN
        SELECT 'sync_hints_' || p_table::oid AS name, ferry.sync_hints_source(p_table) AS source
        UNION ALL
        SELECT 'sync_mark_' || p_table::oid, ferry.sync_mark_source(p_table)
    LOOP
        SELECT p.prosrc INTO v_current FROM pg_proc p
         WHERE p.pronamespace = 'ferry'::regnamespace AND p.proname = v_row.name;
        IF v_row.source IS NULL THEN
            IF v_current IS NOT NULL THEN
                EXECUTE format('DROP FUNCTION ferry.%I(anyelement)', v_row.name);
            END IF;
        ELSIF v_current IS DISTINCT FROM v_row.source THEN
            EXECUTE format('CREATE OR REPLACE FUNCTION ferry.%I(anyelement) RETURNS boolean LANGUAGE sql VOLATILE AS %L',
                           v_row.name, v_row.source);
            -- The serve role's UPDATE calls it, and PostgreSQL inlines it only for a caller
            -- who may execute it. It only collects hints or marks the statement, which that
            -- role may do itself.
            EXECUTE format('GRANT EXECUTE ON FUNCTION ferry.%I(anyelement) TO PUBLIC', v_row.name);
        END IF;
    END LOOP;
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.refresh_sync_reach(p_table regclass)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_source text := ferry.sync_reach_source(p_table);
    v_columns text[] := ferry.sync_reach_columns(p_table);
    v_function regprocedure;
    v_trigger name;
BEGIN
    IF v_source IS NULL THEN
        -- Only what exists: DROP ... IF EXISTS would print a notice per table
        -- on every migration.
        FOR v_trigger IN
            SELECT t.tgname FROM pg_trigger t
             WHERE t.tgrelid = p_table AND t.tgname IN ('zz_ferry_reach_insert', 'zz_ferry_reach_update')
        LOOP
            EXECUTE format('DROP TRIGGER %I ON %s', v_trigger, p_table);
        END LOOP;
        IF to_regprocedure(format('ferry.%I()', 'sync_reach_' || p_table::oid)) IS NOT NULL THEN
            EXECUTE format('DROP FUNCTION ferry.%I()', 'sync_reach_' || p_table::oid);
        END IF;
        RETURN;
    END IF;
    v_function := ferry.generated_trigger_function('sync_reach_' || p_table::oid, v_source);
    PERFORM ferry.point_trigger(p_table, 'zz_ferry_reach_insert', 'AFTER INSERT',
        'REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT', v_function);
    IF NOT EXISTS (
        SELECT 1 FROM pg_trigger t
         WHERE t.tgrelid = p_table AND t.tgname = 'zz_ferry_reach_update' AND t.tgfoid = v_function
           AND t.tgtype = 17 -- ROW | UPDATE, AFTER
           AND t.tgqual IS NOT NULL
           AND (SELECT array_agg(a.attname::text ORDER BY a.attname::text)
                  FROM pg_depend d
                  JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
                 WHERE d.classid = 'pg_trigger'::regclass AND d.objid = t.oid
                   AND d.refclassid = 'pg_class'::regclass AND d.refobjid = p_table AND d.refobjsubid > 0)
               = (SELECT array_agg(c ORDER BY c) FROM unnest(v_columns) c)) THEN
        EXECUTE format('CREATE OR REPLACE TRIGGER zz_ferry_reach_update AFTER UPDATE ON %s FOR EACH ROW WHEN (%s) '
                       'EXECUTE FUNCTION %s', p_table,
                       (SELECT string_agg(format('OLD.%1$I IS DISTINCT FROM NEW.%1$I', c), ' OR ' ORDER BY c)
                          FROM unnest(v_columns) c),
                       v_function);
    END IF;
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.refresh_sync_rules()
 RETURNS integer
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_rule record;
    v_count int := 0;
BEGIN
    -- Forget rules of dropped tables first.
    DELETE FROM ferry.sync_rules r WHERE NOT EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = r.table_oid);
    FOR v_rule IN
        SELECT r.table_oid, r.kind FROM ferry.sync_rules r
         ORDER BY CASE r.kind WHEN 'members' THEN 0 WHEN 'grant' THEN 1 WHEN 'owned' THEN 2 ELSE 3 END, r.table_oid::oid
    LOOP
        IF v_rule.kind = 'grant' THEN
            PERFORM ferry.rules_apply_grant(v_rule.table_oid);
        END IF;
        PERFORM ferry.rules_apply(v_rule.table_oid);
        v_count := v_count + 1;
    END LOOP;
    -- Private checks no child writes through any more (their policies were made again above).
    FOR v_rule IN
        SELECT f.oid::regprocedure AS check_function FROM pg_proc f
         WHERE f.proname LIKE '\_ferry\_writes\_%'
           AND obj_description(f.oid, 'pg_proc') LIKE 'Generated by ferry.rules_apply_private_check %'
           AND NOT EXISTS (SELECT 1 FROM ferry.sync_rules c
                            WHERE c.kind = 'child' AND ferry.rules_granted_table(c.target_table)
                              AND to_regproc(ferry.rules_private_check(c.target_table)) = f.oid)
    LOOP
        EXECUTE format('DROP FUNCTION %s', v_rule.check_function);
    END LOOP;
    RETURN v_count;
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.refresh_sync_trigger(p_table regclass)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    PERFORM ferry.refresh_sync_update_trigger(p_table);
    PERFORM ferry.refresh_sync_notify(p_table);
    PERFORM ferry.refresh_sync_reach(p_table);
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.refresh_sync_triggers()
 RETURNS integer
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_table regclass;
    v_stale regprocedure;
    v_count int := 0;
BEGIN
    FOR v_table IN
        SELECT s.table_oid FROM ferry.synced_tables s
         WHERE EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = s.table_oid)
           AND has_table_privilege(s.table_oid, 'TRIGGER')
         ORDER BY s.table_oid::oid
    LOOP
        PERFORM ferry.refresh_sync_trigger(v_table);
        v_count := v_count + 1;
    END LOOP;
    FOR v_stale IN
        SELECT p.oid::regprocedure FROM pg_proc p
         WHERE p.pronamespace = 'ferry'::regnamespace AND p.proname ~ '^sync_(update|notify)_[0-9]+$'
           AND NOT EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgfoid = p.oid)
        UNION ALL
        -- A row hints or row mark function (live.sql) of a table that no longer has a notify
        -- trigger (its INSERT's: a table with a mark function has no UPDATE statement trigger).
        SELECT p.oid::regprocedure FROM pg_proc p
         WHERE p.pronamespace = 'ferry'::regnamespace AND p.proname ~ '^sync_(hints|mark)_[0-9]+$'
           AND NOT EXISTS (SELECT 1 FROM pg_trigger t
                            WHERE t.tgrelid = regexp_replace(p.proname, '^sync_(hints|mark)_', '')::oid
                              AND t.tgname = 'zz_ferry_notify_insert')
    LOOP
        EXECUTE format('DROP FUNCTION %s', v_stale);
    END LOOP;
    PERFORM pg_notify('ferry_schema', '');
    RETURN v_count;
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.refresh_sync_update_trigger(p_table regclass)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    PERFORM ferry.point_trigger(p_table, 'zz_ferry_sync_update', 'BEFORE UPDATE', 'FOR EACH ROW',
        ferry.generated_trigger_function('sync_update_' || p_table::oid, ferry.sync_update_source(p_table), false));
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.revoke_all_tokens_of(p_user uuid)
 RETURNS text[]
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_hashes text[];
BEGIN
    WITH r AS (
        UPDATE ferry.tokens t SET revoked = true WHERE t.user_id = p_user AND NOT t.revoked RETURNING t.token_hash
    )
    SELECT coalesce(array_agg(r.token_hash::text), '{}') INTO v_hashes FROM r;
    PERFORM pg_notify('ferry_users', p_user::text);
    RETURN v_hashes;
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.revoke_token(p_token_hash bytea)
 RETURNS boolean
 LANGUAGE sql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
    WITH r AS (
        UPDATE ferry.tokens SET revoked = true
         WHERE token_hash = p_token_hash AND NOT revoked
        RETURNING 1
    )
    SELECT count(*) > 0 FROM r;
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.rules_add(p_table regclass, p_kind text, p_column name, p_target regclass, p_member name, p_links name[], p_fixed name[], p_read_only name[])
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_existing ferry.sync_rules;
    v_own text;
    v_column name;
BEGIN
    SELECT * INTO v_existing FROM ferry.sync_rules r WHERE r.table_oid = p_table;
    IF FOUND THEN
        RAISE EXCEPTION USING ERRCODE = '42710',
            MESSAGE = format('%s already has a sync rule (%s, by %I): a table has one rule', p_table, v_existing.kind,
                             v_existing.rule_column),
            HINT = format('To state it differently, SELECT ferry.drop_sync_rules(%L) first, in the same migration.',
                          p_table::text);
    END IF;
    SELECT string_agg(quote_ident(p.polname), ', ' ORDER BY p.polname) INTO v_own
      FROM pg_policy p WHERE p.polrelid = p_table AND p.polname NOT LIKE 'ferry\_rules\_%';
    IF v_own IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = '55000',
            MESSAGE = format('%s has row level security policies of its own (%s): the rules write every policy of a table',
                             p_table, v_own),
            HINT = format('Drop them in the same migration first (DROP POLICY <name> ON %s), or keep writing this table''s SQL by hand.', p_table);
    END IF;
    FOREACH v_column IN ARRAY p_links || p_fixed || p_read_only LOOP
        PERFORM ferry.rules_column_type(p_table, v_column, CASE
            WHEN v_column = ANY (p_links) THEN 'links' WHEN v_column = ANY (p_fixed) THEN 'fixed' ELSE 'read_only' END);
        IF v_column IN ('id', 'revision', 'last_modified', 'is_deleted', p_column, p_member) THEN
            RAISE EXCEPTION USING ERRCODE = '22023',
                MESSAGE = format('%s.%I cannot be listed in links, fixed or read_only: Ferry or the rule itself decides who writes it',
                                 p_table, v_column);
        END IF;
    END LOOP;
    FOREACH v_column IN ARRAY p_links LOOP
        PERFORM ferry.rules_synced_reference(p_table, v_column, 'links');
    END LOOP;

    -- A table synced already (by hand, before the rule) keeps its sync columns as they are.
    IF NOT EXISTS (SELECT 1 FROM ferry.synced_tables s WHERE s.table_oid = p_table) THEN
        PERFORM ferry.enable_sync(p_table);
    END IF;
    INSERT INTO ferry.sync_rules (table_oid, kind, rule_column, target_table, member_column, links, fixed, read_only)
    VALUES (p_table, p_kind, p_column, p_target, p_member, p_links, p_fixed, p_read_only);
    PERFORM ferry.refresh_sync_rules();
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.rules_apply(p_table regclass)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_rule ferry.sync_rules;
    v_policies jsonb := ferry.rules_policies(p_table);
    v_policy record;
    v_writable jsonb := ferry.rules_writable(p_table);
    v_schema name;
    v_function text;
    v_source text;
    v_target regclass;
BEGIN
    SELECT * INTO v_rule FROM ferry.sync_rules r WHERE r.table_oid = p_table;
    SELECT n.nspname INTO v_schema FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = p_table;

    IF NOT (SELECT c.relrowsecurity FROM pg_class c WHERE c.oid = p_table) THEN
        EXECUTE format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', p_table);
    END IF;

    -- A members rule's array of the caller's scope ids, before the policies that call it.
    IF v_rule.kind = 'members' THEN
        v_function := ferry.rules_scope_ids_function(p_table);
        -- PL/pgSQL, not SQL: a SQL function that cannot be inlined (SECURITY DEFINER) is
        -- planned again in every statement that calls it (~0.2-0.4 ms each, and every
        -- policy of a scope's tables calls one), where PL/pgSQL keeps its plan for the session.
        v_source := format($f$
            BEGIN RETURN (SELECT coalesce(array_agg(m.%1$I), '{}') FROM %2$s m
             WHERE m.%3$I = ferry.current_user_id() AND NOT m.is_deleted); END
            $f$, v_rule.rule_column, p_table, v_rule.member_column);
        IF to_regprocedure(v_function) IS NULL
           OR (SELECT p.prosrc FROM pg_proc p WHERE p.oid = to_regprocedure(v_function)) IS DISTINCT FROM v_source THEN
            EXECUTE format($f$
                CREATE OR REPLACE FUNCTION %s RETURNS %s[] LANGUAGE plpgsql STABLE SECURITY DEFINER
                    SET search_path = pg_catalog, pg_temp AS %L
                $f$, v_function, (SELECT format_type(a.atttypid, a.atttypmod) FROM pg_attribute a
                                   WHERE a.attrelid = v_rule.target_table AND a.attname = 'id'), v_source);
            EXECUTE format('COMMENT ON FUNCTION %s IS %L', v_function,
                           format('Generated by ferry.sync_members for %s: the caller''s live scope ids. Do not edit.', p_table));
            EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', v_function);
            EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO ferry_app', v_function);
        END IF;
    END IF;

    -- A child of a granted table writes through its parent's private check.
    IF v_rule.kind = 'child' AND ferry.rules_granted_table(v_rule.target_table) THEN
        PERFORM ferry.rules_apply_private_check(v_rule.target_table);
    END IF;

    IF v_rule.policies IS DISTINCT FROM v_policies OR EXISTS (
        SELECT 1 FROM jsonb_object_keys(v_policies) k
         WHERE NOT EXISTS (SELECT 1 FROM pg_policy p WHERE p.polrelid = p_table AND p.polname = k)) THEN
        FOR v_policy IN SELECT p.polname FROM pg_policy p WHERE p.polrelid = p_table AND p.polname LIKE 'ferry\_rules\_%' LOOP
            EXECUTE format('DROP POLICY %I ON %s', v_policy.polname, p_table);
        END LOOP;
        FOR v_policy IN SELECT key AS name, value FROM jsonb_each(v_policies) ORDER BY key LOOP
            EXECUTE format('CREATE POLICY %I ON %s FOR %s%s%s', v_policy.name, p_table, v_policy.value ->> 'cmd',
                           CASE WHEN v_policy.value ? 'using' THEN format(' USING (%s)', v_policy.value ->> 'using') ELSE '' END,
                           CASE WHEN v_policy.value ? 'check' THEN format(' WITH CHECK (%s)', v_policy.value ->> 'check') ELSE '' END);
        END LOOP;
        UPDATE ferry.sync_rules SET policies = v_policies WHERE table_oid = p_table;
    END IF;

    IF ferry.rules_granted(p_table) IS DISTINCT FROM v_writable || '{"select": true, "delete": false}' THEN
        EXECUTE format('REVOKE ALL ON %s FROM ferry_app', p_table);
        EXECUTE format('GRANT SELECT ON %s TO ferry_app', p_table);
        IF jsonb_array_length(v_writable -> 'insert') > 0 THEN
            EXECUTE format('GRANT INSERT (%s) ON %s TO ferry_app',
                           (SELECT string_agg(quote_ident(c), ', ') FROM jsonb_array_elements_text(v_writable -> 'insert') c), p_table);
        END IF;
        IF jsonb_array_length(v_writable -> 'update') > 0 THEN
            EXECUTE format('GRANT UPDATE (%s) ON %s TO ferry_app',
                           (SELECT string_agg(quote_ident(c), ', ') FROM jsonb_array_elements_text(v_writable -> 'update') c), p_table);
        END IF;
    END IF;
    IF NOT has_schema_privilege('ferry_app', v_schema, 'USAGE') THEN
        EXECUTE format('GRANT USAGE ON SCHEMA %I TO ferry_app', v_schema);
    END IF;

    PERFORM ferry.rules_index_references(p_table);

    -- The access scopes this table is a member of.
    DELETE FROM ferry.access_scopes s WHERE s.member_table = p_table AND NOT EXISTS (
        SELECT 1 FROM ferry.rules_scopes() d WHERE d.scope_table = s.scope_table AND d.member_table = s.member_table);
    INSERT INTO ferry.access_scopes (scope_table, member_table, member_column, read_through_scope)
    SELECT d.scope_table, d.member_table, d.member_column, d.read_through_scope FROM ferry.rules_scopes() d
     WHERE d.member_table = p_table
    ON CONFLICT (scope_table, member_table) DO UPDATE
        SET member_column = excluded.member_column, read_through_scope = excluded.read_through_scope
      WHERE (ferry.access_scopes.member_column, ferry.access_scopes.read_through_scope)
            IS DISTINCT FROM (excluded.member_column, excluded.read_through_scope);

    -- Its notify trigger names private members (ferry.sync_notify_source), so a
    -- grant rule added or dropped through this table's scope regenerates it.
    IF v_rule.kind = 'members' THEN
        PERFORM ferry.refresh_sync_notify(p_table);
    END IF;

    -- Membership: record access granted and lost.
    IF v_rule.kind = 'members' AND NOT EXISTS (
        SELECT 1 FROM pg_trigger t WHERE t.tgrelid = p_table AND t.tgname = 'zz_ferry_rules_members') THEN
        EXECUTE format('CREATE TRIGGER zz_ferry_rules_members AFTER INSERT OR UPDATE ON %s FOR EACH ROW '
                       'EXECUTE FUNCTION ferry.rules_membership_changed(%L, %L, %L)',
                       p_table, v_rule.target_table::oid, v_rule.rule_column, v_rule.member_column);
    END IF;

    -- Children (and rows linking here) follow a deleted row of their parent.
    FOR v_target IN
        SELECT DISTINCT t FROM (
            SELECT v_rule.target_table AS t WHERE v_rule.kind = 'child'
            UNION ALL SELECT ferry.rules_reference(p_table, l) FROM unnest(v_rule.links) l) x
    LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgrelid = v_target AND t.tgname = 'zz_ferry_rules_children') THEN
            EXECUTE format('CREATE TRIGGER zz_ferry_rules_children AFTER UPDATE ON %s FOR EACH ROW '
                           'WHEN (NEW.is_deleted AND NOT OLD.is_deleted) EXECUTE FUNCTION ferry.rules_delete_children()',
                           v_target);
        END IF;
    END LOOP;
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.rules_apply_grant(p_table regclass)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_rule ferry.sync_rules;
    v_through regclass := ferry.rules_through(p_table);
    v_function text := ferry.rules_scope_ids_function(p_table);
    v_memberships text;
    v_source text;
    v_members ferry.sync_rules;
    v_target regclass;
BEGIN
    SELECT * INTO v_rule FROM ferry.sync_rules r WHERE r.table_oid = p_table;
    SELECT string_agg(format('SELECT m.%I FROM %s m WHERE m.%I = ferry.current_user_id() AND NOT m.is_deleted',
                             m.rule_column, m.table_oid, m.member_column), ' UNION ALL ' ORDER BY m.table_oid::oid)
      INTO v_memberships
      FROM ferry.sync_rules m WHERE m.kind = 'members' AND m.target_table = v_through;
    -- PL/pgSQL for its plan kept for the session (see ferry.rules_apply's members function).
    v_source := format($f$
        BEGIN RETURN (SELECT coalesce(array_agg(DISTINCT g.%1$I), '{}') FROM %2$s g
         WHERE NOT g.is_deleted AND g.%3$I IN (%4$s)); END
        $f$, v_rule.rule_column, p_table, v_rule.member_column,
        coalesce(v_memberships, format('SELECT NULL::%s WHERE false', ferry.rules_id_type(v_through))));
    IF to_regprocedure(v_function) IS NULL
       OR (SELECT p.prosrc FROM pg_proc p WHERE p.oid = to_regprocedure(v_function)) IS DISTINCT FROM v_source THEN
        EXECUTE format($f$
            CREATE OR REPLACE FUNCTION %s RETURNS %s[] LANGUAGE plpgsql STABLE SECURITY DEFINER
                SET search_path = pg_catalog, pg_temp AS %L
            $f$, v_function, ferry.rules_id_type(v_rule.target_table), v_source);
        EXECUTE format('COMMENT ON FUNCTION %s IS %L', v_function,
                       format('Generated by ferry.sync_grant for %s: the scope ids the caller reads through it. Do not edit.', p_table));
        EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', v_function);
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO ferry_app', v_function);
    END IF;

    IF NOT EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgrelid = p_table AND t.tgname = 'zz_ferry_rules_grant') THEN
        EXECUTE format('CREATE TRIGGER zz_ferry_rules_grant AFTER INSERT OR UPDATE ON %s FOR EACH ROW '
                       'EXECUTE FUNCTION ferry.rules_grant_changed(%L, %L, %L)',
                       p_table, v_rule.target_table::oid, v_rule.rule_column, v_rule.member_column);
    END IF;
    FOR v_members IN SELECT * FROM ferry.sync_rules m WHERE m.kind = 'members' AND m.target_table = v_through LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgrelid = v_members.table_oid AND t.tgname = 'zz_ferry_rules_grants') THEN
            EXECUTE format('CREATE TRIGGER zz_ferry_rules_grants AFTER INSERT OR UPDATE ON %s FOR EACH ROW '
                           'EXECUTE FUNCTION ferry.rules_grant_membership_changed(%L, %L, %L)',
                           v_members.table_oid, v_through::oid, v_members.rule_column, v_members.member_column);
        END IF;
    END LOOP;
    FOREACH v_target IN ARRAY ARRAY[v_rule.target_table, v_through] LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgrelid = v_target AND t.tgname = 'zz_ferry_rules_children') THEN
            EXECUTE format('CREATE TRIGGER zz_ferry_rules_children AFTER UPDATE ON %s FOR EACH ROW '
                           'WHEN (NEW.is_deleted AND NOT OLD.is_deleted) EXECUTE FUNCTION ferry.rules_delete_children()',
                           v_target);
        END IF;
    END LOOP;
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.rules_apply_private_check(p_table regclass)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_function text := ferry.rules_private_check(p_table);
    v_type text := ferry.rules_id_type(p_table);
    v_source text := format(E'\nBEGIN\n    RETURN EXISTS (SELECT FROM %s ferry_w0 WHERE ferry_w0.id OPERATOR(pg_catalog.=) p_id\n        AND (%s));\nEND\n',
                            p_table, ferry.rules_private_check_test(p_table, 'ferry_w0', 0));
    v_signature text := format('%s(%s)', v_function, v_type);
BEGIN
    IF to_regprocedure(v_signature) IS NOT NULL
       AND (SELECT p.prosrc FROM pg_proc p WHERE p.oid = to_regprocedure(v_signature)) IS NOT DISTINCT FROM v_source THEN
        RETURN;
    END IF;
    EXECUTE format('CREATE OR REPLACE FUNCTION %s(p_id %s) RETURNS boolean LANGUAGE plpgsql STABLE SECURITY DEFINER AS %L',
                   v_function, v_type, v_source);
    EXECUTE format('COMMENT ON FUNCTION %s IS %L', v_signature,
                   format('Generated by ferry.rules_apply_private_check for %s: whether the caller writes the row with this id. Do not edit.', p_table));
    EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', v_signature);
    EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO ferry_app', v_signature);
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.rules_column_type(p_table regclass, p_column name, p_named_as text)
 RETURNS text
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_type text;
BEGIN
    SELECT format_type(a.atttypid, a.atttypmod) INTO v_type
      FROM pg_attribute a
     WHERE a.attrelid = p_table AND a.attname = p_column AND a.attnum > 0 AND NOT a.attisdropped;
    IF v_type IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = '42703',
            MESSAGE = format('%s has no column %I (named as %s)', p_table, p_column, p_named_as),
            HINT = format('The columns of %s are: %s.', p_table, (
                SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum) FROM pg_attribute a
                 WHERE a.attrelid = p_table AND a.attnum > 0 AND NOT a.attisdropped AND left(a.attname, 7) <> '_ferry_'));
    END IF;
    RETURN v_type;
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.rules_delete_children()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_child record;
BEGIN
    FOR v_child IN
        SELECT r.table_oid, r.rule_column AS reference FROM ferry.sync_rules r
         WHERE r.kind IN ('child', 'grant') AND r.target_table = TG_RELID
        UNION
        SELECT r.table_oid, r.member_column FROM ferry.sync_rules r
         WHERE r.kind = 'grant' AND ferry.rules_reference(r.table_oid, r.member_column) = TG_RELID
        UNION
        SELECT r.table_oid, l FROM ferry.sync_rules r, unnest(r.links) l
         WHERE ferry.rules_reference(r.table_oid, l) = TG_RELID
    LOOP
        EXECUTE format('UPDATE %s SET is_deleted = true WHERE %I = $1 AND NOT is_deleted', v_child.table_oid, v_child.reference)
          USING NEW.id;
    END LOOP;
    RETURN NULL;
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.rules_feed_indexes(p_table regclass)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_column name;
    v_attnums int2[];
BEGIN
    FOR v_column IN
        SELECT c FROM ferry.sync_rules r, unnest(ARRAY[r.rule_column, r.member_column]) c
         WHERE r.table_oid = p_table AND c IS NOT NULL
    LOOP
        SELECT array_agg(a.attnum ORDER BY k.n) INTO v_attnums
          FROM unnest(ARRAY[v_column, '_ferry_xid'::name]) WITH ORDINALITY k(name, n)
          JOIN pg_attribute a ON a.attrelid = p_table AND a.attname = k.name AND NOT a.attisdropped;
        CONTINUE WHEN cardinality(v_attnums) < 2 OR EXISTS (
            SELECT 1 FROM pg_index i
             WHERE i.indrelid = p_table AND i.indpred IS NULL AND (i.indkey::int2[])[0:1] = v_attnums);
        EXECUTE format('CREATE INDEX %I ON %s (%I, _ferry_xid, id)',
                       left((SELECT c.relname FROM pg_class c WHERE c.oid = p_table) || '_' || v_column, 54) || '_feed_idx',
                       p_table, v_column);
    END LOOP;
END
$function$
;
GRANT EXECUTE TO PUBLIC

CREATE OR REPLACE FUNCTION ferry.rules_grant_changed()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_scope regclass := TG_ARGV[0]::oid::regclass;
    v_through regclass := ferry.rules_reference(TG_RELID, TG_ARGV[2]);
    v_new jsonb := to_jsonb(NEW);
    v_old jsonb := CASE WHEN TG_OP = 'UPDATE' THEN to_jsonb(OLD) END;
    v_moved boolean := TG_OP = 'UPDATE'
        AND (v_new -> TG_ARGV[1] IS DISTINCT FROM v_old -> TG_ARGV[1] OR v_new -> TG_ARGV[2] IS DISTINCT FROM v_old -> TG_ARGV[2]);
BEGIN
    IF TG_OP = 'UPDATE' AND NOT (v_old ->> 'is_deleted')::boolean AND ((v_new ->> 'is_deleted')::boolean OR v_moved) THEN
        PERFORM ferry.rules_grant_reach(v_through, v_old ->> TG_ARGV[2], v_scope, v_old ->> TG_ARGV[1], false);
    END IF;
    IF NOT (v_new ->> 'is_deleted')::boolean
       AND (TG_OP = 'INSERT' OR (v_old ->> 'is_deleted')::boolean OR v_moved) THEN
        PERFORM ferry.rules_grant_reach(v_through, v_new ->> TG_ARGV[2], v_scope, v_new ->> TG_ARGV[1], true);
    END IF;
    RETURN NULL;
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.rules_grant_membership_changed()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_through regclass := TG_ARGV[0]::oid::regclass;
    v_new jsonb := to_jsonb(NEW);
    v_old jsonb := CASE WHEN TG_OP = 'UPDATE' THEN to_jsonb(OLD) END;
    v_moved boolean := TG_OP = 'UPDATE'
        AND (v_new -> TG_ARGV[1] IS DISTINCT FROM v_old -> TG_ARGV[1] OR v_new -> TG_ARGV[2] IS DISTINCT FROM v_old -> TG_ARGV[2]);
    v_grant ferry.sync_rules;
    v_scope_id text;
BEGIN
    FOR v_grant IN
        SELECT * FROM ferry.sync_rules g WHERE g.kind = 'grant' AND ferry.rules_through(g.table_oid) = v_through
         ORDER BY g.table_oid::oid
    LOOP
        IF TG_OP = 'UPDATE' AND NOT (v_old ->> 'is_deleted')::boolean AND ((v_new ->> 'is_deleted')::boolean OR v_moved) THEN
            FOR v_scope_id IN EXECUTE format('SELECT DISTINCT g.%I::text FROM %s g WHERE g.%I = CAST($1 AS %s) AND NOT g.is_deleted',
                                             v_grant.rule_column, v_grant.table_oid, v_grant.member_column,
                                             ferry.rules_id_type(v_through))
                              USING v_old ->> TG_ARGV[1]
            LOOP
                PERFORM ferry.record_access_revocation((v_old ->> TG_ARGV[2])::uuid, v_grant.target_table, v_scope_id, true);
            END LOOP;
        END IF;
        IF NOT (v_new ->> 'is_deleted')::boolean
           AND (TG_OP = 'INSERT' OR (v_old ->> 'is_deleted')::boolean OR v_moved) THEN
            FOR v_scope_id IN EXECUTE format('SELECT DISTINCT g.%I::text FROM %s g WHERE g.%I = CAST($1 AS %s) AND NOT g.is_deleted',
                                             v_grant.rule_column, v_grant.table_oid, v_grant.member_column,
                                             ferry.rules_id_type(v_through))
                              USING v_new ->> TG_ARGV[1]
            LOOP
                PERFORM ferry.record_access_grant((v_new ->> TG_ARGV[2])::uuid, v_grant.target_table, v_scope_id);
            END LOOP;
        END IF;
    END LOOP;
    RETURN NULL;
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.rules_grant_reach(p_through regclass, p_through_id text, p_scope regclass, p_scope_id text, p_grant boolean)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_members ferry.sync_rules;
    v_user uuid;
BEGIN
    FOR v_members IN
        SELECT * FROM ferry.sync_rules m WHERE m.kind = 'members' AND m.target_table = p_through ORDER BY m.table_oid::oid
    LOOP
        FOR v_user IN EXECUTE format('SELECT DISTINCT m.%I FROM %s m WHERE m.%I = CAST($1 AS %s) AND NOT m.is_deleted',
                                     v_members.member_column, v_members.table_oid, v_members.rule_column,
                                     ferry.rules_id_type(p_through))
                      USING p_through_id
        LOOP
            IF p_grant THEN
                PERFORM ferry.record_access_grant(v_user, p_scope, p_scope_id);
            ELSE
                PERFORM ferry.record_access_revocation(v_user, p_scope, p_scope_id, true);
            END IF;
        END LOOP;
    END LOOP;
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.rules_granted(p_table regclass)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
RETURN jsonb_build_object('insert', COALESCE((SELECT jsonb_agg(a.attname ORDER BY a.attnum) AS jsonb_agg FROM pg_attribute a WHERE ((a.attrelid = (rules_granted.p_table)::oid) AND (a.attnum > 0) AND (NOT a.attisdropped) AND has_column_privilege('ferry_app'::name, (rules_granted.p_table)::oid, a.attnum, 'INSERT'::text))), '[]'::jsonb), 'update', COALESCE((SELECT jsonb_agg(a.attname ORDER BY a.attnum) AS jsonb_agg FROM pg_attribute a WHERE ((a.attrelid = (rules_granted.p_table)::oid) AND (a.attnum > 0) AND (NOT a.attisdropped) AND has_column_privilege('ferry_app'::name, (rules_granted.p_table)::oid, a.attnum, 'UPDATE'::text))), '[]'::jsonb), 'select', has_table_privilege('ferry_app'::name, (p_table)::oid, 'SELECT'::text), 'delete', has_table_privilege('ferry_app'::name, (p_table)::oid, 'DELETE'::text))
;

CREATE OR REPLACE FUNCTION ferry.rules_granted_table(p_table regclass)
 RETURNS boolean
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
    WITH RECURSIVE up (table_oid, kind, target_table, depth) AS (
        SELECT r.table_oid, r.kind, r.target_table, 0 FROM ferry.sync_rules r WHERE r.table_oid = p_table
        UNION ALL
        SELECT p.table_oid, p.kind, p.target_table, up.depth + 1
          FROM up JOIN ferry.sync_rules p ON p.table_oid = up.target_table
         WHERE up.kind = 'child' AND up.depth < 6)
    SELECT EXISTS (SELECT 1 FROM up JOIN ferry.sync_rules g ON g.kind = 'grant' AND g.target_table = up.table_oid
                    WHERE up.kind = 'owned')
$function$
;

CREATE OR REPLACE FUNCTION ferry.rules_id_type(p_table regclass)
 RETURNS text
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
RETURN (SELECT format_type(a.atttypid, a.atttypmod) AS format_type FROM pg_attribute a WHERE ((a.attrelid = (rules_id_type.p_table)::oid) AND (a.attname = 'id'::name) AND (NOT a.attisdropped)))
;

CREATE OR REPLACE FUNCTION ferry.rules_index_foreign_keys(p_table regclass)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_key record;
    v_columns text[];
    v_name text;
    v_parent name;
BEGIN
    SELECT r.rule_column INTO v_parent FROM ferry.sync_rules r WHERE r.table_oid = p_table AND r.kind = 'child'
       AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = p_table AND a.attname = 'rank' AND NOT a.attisdropped);
    FOR v_key IN
        SELECT c.conkey, (SELECT array_agg(a.attname::text ORDER BY k.n) FROM unnest(c.conkey) WITH ORDINALITY k(attnum, n)
                            JOIN pg_attribute a ON a.attrelid = p_table AND a.attnum = k.attnum) AS names
          FROM pg_constraint c WHERE c.conrelid = p_table AND c.contype = 'f' ORDER BY c.conname
    LOOP
        v_columns := v_key.names;
        IF v_parent IS NOT NULL AND v_columns = ARRAY[v_parent::text] THEN
            v_columns := v_columns || ARRAY['rank', 'id'];
        END IF;
        CONTINUE WHEN EXISTS (
            SELECT 1 FROM pg_index i
             WHERE i.indrelid = p_table AND i.indpred IS NULL
               AND (i.indkey::int2[])[0:cardinality(v_columns) - 1] = (
                   SELECT array_agg(a.attnum ORDER BY k.n) FROM unnest(v_columns) WITH ORDINALITY k(name, n)
                     JOIN pg_attribute a ON a.attrelid = p_table AND a.attname = k.name));
        v_name := left((SELECT c.relname FROM pg_class c WHERE c.oid = p_table) || '_' || array_to_string(v_columns, '_'), 59) || '_idx';
        EXECUTE format('CREATE INDEX %I ON %s (%s)', v_name, p_table,
                       (SELECT string_agg(quote_ident(x), ', ') FROM unnest(v_columns) x));
    END LOOP;
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.rules_index_references(p_table regclass)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    PERFORM ferry.rules_index_foreign_keys(p_table);
    PERFORM ferry.rules_feed_indexes(p_table);
END
$function$
;
GRANT EXECUTE TO PUBLIC

CREATE OR REPLACE FUNCTION ferry.rules_membership_changed()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_scope regclass := TG_ARGV[0]::oid::regclass;
    v_new jsonb := to_jsonb(NEW);
    v_old jsonb := CASE WHEN TG_OP = 'UPDATE' THEN to_jsonb(OLD) END;
    v_moved boolean := TG_OP = 'UPDATE'
        AND (v_new -> TG_ARGV[1] IS DISTINCT FROM v_old -> TG_ARGV[1] OR v_new -> TG_ARGV[2] IS DISTINCT FROM v_old -> TG_ARGV[2]);
BEGIN
    IF TG_OP = 'UPDATE' AND NOT (v_old ->> 'is_deleted')::boolean AND ((v_new ->> 'is_deleted')::boolean OR v_moved) THEN
        PERFORM ferry.record_access_revocation((v_old ->> TG_ARGV[2])::uuid, v_scope, v_old ->> TG_ARGV[1]);
    END IF;
    IF NOT (v_new ->> 'is_deleted')::boolean
       AND (TG_OP = 'INSERT' OR (v_old ->> 'is_deleted')::boolean OR v_moved) THEN
        PERFORM ferry.record_access_grant((v_new ->> TG_ARGV[2])::uuid, v_scope, v_new ->> TG_ARGV[1]);
    END IF;
    RETURN NULL;
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.rules_policies(p_table regclass)
 RETURNS jsonb
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_rule ferry.sync_rules;
    v_name name;
    v_read text;
    v_write text;
    v_create text;
    v_links text := '';
    v_member record;
    v_owner_of_scope text;
    v_scope_rule ferry.sync_rules;
    v_scope_read text;
    v_through regclass;
    v_ids text;
BEGIN
    SELECT * INTO v_rule FROM ferry.sync_rules r WHERE r.table_oid = p_table;
    SELECT c.relname INTO v_name FROM pg_class c WHERE c.oid = p_table;
    SELECT coalesce(string_agg(ferry.rules_readable(p_table, l, ferry.rules_reference(p_table, l)), ' AND '), '')
      INTO v_links FROM unnest(v_rule.links) l;

    IF v_rule.kind = 'owned' THEN
        v_create := format('%I.%I = ferry.current_user_id()', v_name, v_rule.rule_column);
        -- The members rules' scope ids in one init plan, their arrays joined (issue 47:
        -- PostgreSQL sets up every init plan of a policy in each statement, used or
        -- not, and a write of a child applies the parent's read policy twice).
        SELECT string_agg(ferry.rules_scope_ids_function(m.table_oid), ' || ' ORDER BY m.table_oid::oid) INTO v_ids
          FROM ferry.sync_rules m WHERE m.kind = 'members' AND m.target_table = p_table;
        v_read := v_create || CASE WHEN v_ids IS NOT NULL THEN format(' OR %I.id = ANY ((SELECT %s)::%s[])', v_name,
                                                                       v_ids, ferry.rules_id_type(p_table)) ELSE '' END;
    ELSIF v_rule.kind = 'child' THEN
        v_read := ferry.rules_readable(p_table, v_rule.rule_column, v_rule.target_table);
        v_create := v_read;
        IF ferry.rules_granted_table(v_rule.target_table) THEN
            -- The parent's private check (ferry.rules_apply_private_check), not a subquery
            -- of the parent under its read policy: no subplans in a write's plan (issue 47:
            -- a PATCH planned 27). The same rows.
            v_create := format('%s(%I.%I)', ferry.rules_private_check(v_rule.target_table), v_name, v_rule.rule_column);
        END IF;
    ELSIF v_rule.kind = 'grant' THEN
        v_through := ferry.rules_reference(p_table, v_rule.member_column);
        v_owner_of_scope := format(
            'EXISTS (SELECT 1 FROM %s t WHERE t.id = %I.%I AND t.%I = ferry.current_user_id()) '
            'AND EXISTS (SELECT 1 FROM %s s WHERE s.id = %I.%I AND s.%I = ferry.current_user_id())',
            v_through, v_name, v_rule.member_column, (SELECT o.rule_column FROM ferry.sync_rules o WHERE o.table_oid = v_through),
            v_rule.target_table, v_name, v_rule.rule_column,
            (SELECT o.rule_column FROM ferry.sync_rules o WHERE o.table_oid = v_rule.target_table));
        RETURN jsonb_build_object(
            'ferry_rules_read', jsonb_build_object('cmd', 'SELECT', 'using',
                ferry.rules_readable(p_table, v_rule.member_column, v_through)),
            'ferry_rules_create', jsonb_build_object('cmd', 'INSERT', 'check', v_owner_of_scope),
            'ferry_rules_write', jsonb_build_object('cmd', 'UPDATE', 'using', v_owner_of_scope, 'check', v_owner_of_scope));
    ELSE
        SELECT * INTO v_scope_rule FROM ferry.sync_rules o WHERE o.table_oid = v_rule.target_table;
        v_owner_of_scope := format('EXISTS (SELECT 1 FROM %s s WHERE s.id = %I.%I AND s.%I = ferry.current_user_id())',
                                   v_rule.target_table, v_name, v_rule.rule_column, v_scope_rule.rule_column);
        v_scope_read := ferry.rules_readable(p_table, v_rule.rule_column, v_rule.target_table);
        IF v_scope_rule.public_column IS NOT NULL OR ferry.rules_granted_table(v_rule.target_table) THEN
            -- The scope's private test (its owner, or a live membership of the
            -- caller's), not its read policy, which admits public and granted rows.
            v_scope_read := format('EXISTS (SELECT 1 FROM %s r WHERE r.id = %I.%I AND (r.%I = ferry.current_user_id() OR r.id = ANY ((SELECT %s)::%s[])))',
                                   v_rule.target_table, v_name, v_rule.rule_column, v_scope_rule.rule_column,
                                   ferry.rules_scope_ids_function(p_table), ferry.rules_id_type(v_rule.target_table));
        END IF;
        IF ferry.rules_private_members(p_table) THEN
            v_scope_read := v_owner_of_scope;
        END IF;
        RETURN jsonb_build_object(
            'ferry_rules_read', jsonb_build_object('cmd', 'SELECT', 'using',
                format('%I.%I = ferry.current_user_id() OR %s', v_name, v_rule.member_column, v_scope_read)),
            'ferry_rules_create', jsonb_build_object('cmd', 'INSERT', 'check', v_owner_of_scope),
            'ferry_rules_write', jsonb_build_object('cmd', 'UPDATE', 'using', v_owner_of_scope, 'check', v_owner_of_scope));
    END IF;

    v_write := CASE WHEN v_rule.kind = 'child' THEN v_create ELSE v_read END;
    IF v_rule.kind = 'owned' THEN
        -- The grant rules' scope ids join the members rules' (one init plan).
        SELECT concat_ws(' || ', v_ids, string_agg(ferry.rules_scope_ids_function(g.table_oid), ' || ' ORDER BY g.table_oid::oid))
          INTO v_ids FROM ferry.sync_rules g WHERE g.kind = 'grant' AND g.target_table = p_table;
        v_read := v_create || CASE WHEN v_ids <> '' THEN format(' OR %I.id = ANY ((SELECT %s)::%s[])', v_name,
                                                                 v_ids, ferry.rules_id_type(p_table)) ELSE '' END;
    END IF;
    IF v_rule.kind = 'owned' AND v_rule.public_column IS NOT NULL THEN
        v_read := format('(%s) OR (%I.%I AND ferry.public_reads())', v_read, v_name, v_rule.public_column);
    END IF;

    IF v_read = v_create AND v_links = '' THEN
        -- One policy for every command, as a hand-written one would be: the same
        -- test, planned once per statement whatever the command.
        RETURN jsonb_build_object('ferry_rules_all', jsonb_build_object('cmd', 'ALL', 'using', v_read, 'check', v_read));
    END IF;
    RETURN jsonb_build_object(
        'ferry_rules_read', jsonb_build_object('cmd', 'SELECT', 'using', v_read),
        'ferry_rules_create', jsonb_build_object('cmd', 'INSERT', 'check',
            CASE WHEN v_links = '' THEN v_create ELSE format('(%s) AND %s', v_create, v_links) END),
        'ferry_rules_write', jsonb_build_object('cmd', 'UPDATE', 'using', v_write, 'check',
            CASE WHEN v_links = '' THEN v_write ELSE format('(%s) AND (%I.is_deleted OR %s)', v_write, v_name, v_links) END));
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.rules_private_check(p_table regclass)
 RETURNS text
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
RETURN (SELECT format('%I.%I'::text, n.nspname, "left"(('_ferry_writes_'::text || (c.relname)::text), 63)) AS format FROM (pg_class c JOIN pg_namespace n ON ((n.oid = c.relnamespace))) WHERE (c.oid = (rules_private_check.p_table)::oid))
;

CREATE OR REPLACE FUNCTION ferry.rules_private_check_test(p_table regclass, p_alias text, p_depth integer)
 RETURNS text
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_rule ferry.sync_rules;
    v_test text;
    v_member regclass;
    v_parent text := 'ferry_w' || (p_depth + 1);
BEGIN
    SELECT * INTO v_rule FROM ferry.sync_rules r WHERE r.table_oid = p_table;
    IF v_rule.kind = 'owned' THEN
        v_test := format('%s.%I OPERATOR(pg_catalog.=) ferry.current_user_id()', p_alias, v_rule.rule_column);
        FOR v_member IN
            SELECT m.table_oid FROM ferry.sync_rules m WHERE m.kind = 'members' AND m.target_table = p_table
             ORDER BY m.table_oid::oid
        LOOP
            v_test := v_test || format(' OR %s.id OPERATOR(pg_catalog.=) ANY (%s)', p_alias, ferry.rules_scope_ids_function(v_member));
        END LOOP;
        RETURN v_test;
    ELSIF v_rule.kind = 'child' AND p_depth < 6 THEN
        RETURN format('EXISTS (SELECT FROM %s %s WHERE %s.id OPERATOR(pg_catalog.=) %s.%I AND (%s))', v_rule.target_table, v_parent,
                      v_parent, p_alias, v_rule.rule_column, ferry.rules_private_check_test(v_rule.target_table, v_parent, p_depth + 1));
    END IF;
    RETURN 'true';
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.rules_private_members(p_table regclass)
 RETURNS boolean
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
    SELECT EXISTS (SELECT 1 FROM ferry.sync_rules m
                    WHERE m.table_oid = p_table AND m.kind = 'members'
                      AND EXISTS (SELECT 1 FROM ferry.sync_rules g
                                   WHERE g.kind = 'grant' AND ferry.rules_through(g.table_oid) = m.target_table))
$function$
;

CREATE OR REPLACE FUNCTION ferry.rules_public_changed()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_was boolean := coalesce((to_jsonb(OLD) ->> TG_ARGV[0])::boolean, false);
    v_is boolean := coalesce((to_jsonb(NEW) ->> TG_ARGV[0])::boolean, false);
    v_member record;
    v_owner name;
BEGIN
    -- Only the row's owner makes it public or private: a member writes the row as its
    -- owner does (its title, its deletion), but publishing a set shows it, and its
    -- tree, to every signed-in user, which is the owner's to decide. The app's own SQL
    -- (no user) may. 42501 with Row Level Security's words: Ferry answers not_allowed.
    IF v_is <> v_was AND ferry.current_user_id() IS NOT NULL THEN
        SELECT r.rule_column INTO v_owner FROM ferry.sync_rules r WHERE r.table_oid = TG_RELID AND r.kind = 'owned';
        -- The owner before the write: one who hands the row over in the same statement
        -- may flip the flag, one who takes it over may not.
        IF v_owner IS NOT NULL AND (to_jsonb(OLD) ->> v_owner) IS DISTINCT FROM ferry.current_user_id()::text THEN
            RAISE EXCEPTION USING ERRCODE = '42501',
                MESSAGE = format('new row violates row-level security policy for table %s: only its owner makes a row public or private',
                                 TG_RELID::regclass);
        END IF;
    END IF;
    IF v_is AND NOT v_was THEN
        INSERT INTO ferry.public_grants (scope_table, scope_id) VALUES (TG_RELID, NEW.id::text) ON CONFLICT DO NOTHING;
    ELSIF v_was AND NOT v_is THEN
        -- Not the rows of its members tables: they stay private to its members
        -- (ferry.rules_policies), so no reader got them by its being public.
        FOR v_member IN
            SELECT s.member_table, s.member_column FROM ferry.access_scopes s
             WHERE s.scope_table = TG_RELID
               AND NOT EXISTS (SELECT 1 FROM ferry.sync_rules m
                                WHERE m.table_oid = s.member_table AND m.kind = 'members' AND m.target_table = TG_RELID)
        LOOP
            EXECUTE format($f$
                INSERT INTO ferry.public_revocations (scope_table, scope_id, table_oid, row_id)
                SELECT %2$L::regclass, $1::text, %3$L::regclass, m.id::text FROM %1$s m WHERE m.%4$I = $1
                ON CONFLICT DO NOTHING
            $f$, v_member.member_table, TG_RELID::oid, v_member.member_table::oid, v_member.member_column)
            USING NEW.id;
        END LOOP;
    END IF;
    RETURN NULL;
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.rules_readable(p_table regclass, p_column name, p_target regclass)
 RETURNS text
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
RETURN format('EXISTS (SELECT 1 FROM %s r WHERE r.id = %I.%I)'::text, p_target, (SELECT c.relname FROM pg_class c WHERE (c.oid = (rules_readable.p_table)::oid)), p_column)
;

CREATE OR REPLACE FUNCTION ferry.rules_reference(p_table regclass, p_column name)
 RETURNS regclass
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
RETURN (SELECT (c.confrelid)::regclass AS confrelid FROM (pg_constraint c JOIN pg_attribute a ON (((a.attrelid = c.conrelid) AND (a.attnum = c.conkey[1])))) WHERE ((c.conrelid = (rules_reference.p_table)::oid) AND (c.contype = 'f'::"char") AND (cardinality(c.conkey) = 1) AND (a.attname = rules_reference.p_column)) ORDER BY c.conname LIMIT 1)
;

CREATE OR REPLACE FUNCTION ferry.rules_scope_ids_function(p_members regclass)
 RETURNS text
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
RETURN (SELECT format('%I.%I()'::text, n.nspname, "left"(('_ferry_scope_ids_'::text || (c.relname)::text), 63)) AS format FROM (pg_class c JOIN pg_namespace n ON ((n.oid = c.relnamespace))) WHERE (c.oid = (rules_scope_ids_function.p_members)::oid))
;

CREATE OR REPLACE FUNCTION ferry.rules_scopes()
 RETURNS TABLE(scope_table regclass, member_table regclass, member_column name, read_through_scope boolean)
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
    SELECT DISTINCT o.table_oid, o.table_oid, 'id'::name, false
      FROM ferry.sync_rules o
     WHERE o.kind = 'owned' AND (o.public_column IS NOT NULL
           OR EXISTS (SELECT 1 FROM ferry.sync_rules m WHERE m.kind IN ('members', 'grant') AND m.target_table = o.table_oid))
    UNION ALL
    SELECT m.target_table, m.table_oid, m.rule_column, false
      FROM ferry.sync_rules m WHERE m.kind = 'members'
    UNION ALL
    SELECT ferry.rules_reference(g.table_oid, g.member_column), g.table_oid, g.member_column, true
      FROM ferry.sync_rules g WHERE g.kind = 'grant'
    UNION ALL
    SELECT c.target_table, c.table_oid, c.rule_column, true
      FROM ferry.sync_rules c
     WHERE c.kind = 'child' AND EXISTS (
           SELECT 1 FROM ferry.sync_rules m
            WHERE (m.kind IN ('members', 'grant') AND m.target_table = c.target_table)
               OR (m.table_oid = c.target_table AND m.public_column IS NOT NULL));
$function$
;

CREATE OR REPLACE FUNCTION ferry.rules_synced_reference(p_table regclass, p_column name, p_named_as text)
 RETURNS regclass
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_target regclass;
BEGIN
    PERFORM ferry.rules_column_type(p_table, p_column, p_named_as);
    v_target := ferry.rules_reference(p_table, p_column);
    IF v_target IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = '42830',
            MESSAGE = format('%s.%I (named as %s) is not a foreign key: the rule reads the row it points at through one',
                             p_table, p_column, p_named_as),
            HINT = format('ALTER TABLE %s ADD FOREIGN KEY (%I) REFERENCES <the table>;', p_table, p_column);
    END IF;
    IF NOT EXISTS (SELECT 1 FROM ferry.synced_tables s WHERE s.table_oid = v_target) THEN
        RAISE EXCEPTION USING ERRCODE = '55000',
            MESSAGE = format('%s.%I (named as %s) points at %s, which is not synced: give %s its rule first',
                             p_table, p_column, p_named_as, v_target, v_target);
    END IF;
    RETURN v_target;
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.rules_through(p_grant regclass)
 RETURNS regclass
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
RETURN (SELECT ferry.rules_reference(r.table_oid, r.member_column) AS rules_reference FROM ferry.sync_rules r WHERE (((r.table_oid)::oid = (rules_through.p_grant)::oid) AND (r.kind = 'grant'::text)))
;

CREATE OR REPLACE FUNCTION ferry.rules_writable(p_table regclass)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
RETURN (WITH r AS (SELECT sync_rules.table_oid, sync_rules.kind, sync_rules.rule_column, sync_rules.target_table, sync_rules.member_column, sync_rules.links, sync_rules.fixed, sync_rules.read_only, sync_rules.policies, sync_rules.created_at FROM ferry.sync_rules WHERE ((sync_rules.table_oid)::oid = (rules_writable.p_table)::oid)), cols AS (SELECT a.attname AS name, a.attnum FROM pg_attribute a, r WHERE ((a.attrelid = (rules_writable.p_table)::oid) AND (a.attnum > 0) AND (NOT a.attisdropped) AND (a.attname <> ALL (ARRAY['revision'::name, 'last_modified'::name])) AND ("left"((a.attname)::text, 7) <> '_ferry_'::text) AND (a.attgenerated = ''::"char") AND (a.attname <> ALL (r.read_only)))), fixed AS (SELECT unnest((((r.fixed || r.links) || ARRAY[r.rule_column, 'id'::name]) || CASE WHEN (r.member_column IS NULL) THEN '{}'::name[] ELSE ARRAY[r.member_column] END)) AS name FROM r) SELECT jsonb_build_object('insert', COALESCE((SELECT jsonb_agg(c.name ORDER BY c.attnum) AS jsonb_agg FROM cols c WHERE (c.name <> 'is_deleted'::name)), '[]'::jsonb), 'update', COALESCE((SELECT jsonb_agg(c.name ORDER BY c.attnum) AS jsonb_agg FROM cols c WHERE (NOT (c.name IN (SELECT fixed.name FROM fixed)))), '[]'::jsonb)) AS jsonb_build_object)
;

CREATE OR REPLACE FUNCTION ferry.sign_in_external(p_issuer text, p_subject text, p_claims text)
 RETURNS text
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_id uuid := ferry.external_user_id(p_issuer, p_subject);
    v_disabled timestamptz;
    v_found boolean;
BEGIN
    SELECT true, u.disabled_at INTO v_found, v_disabled FROM ferry.users u WHERE u.id = v_id;
    IF v_found IS NULL THEN
        -- A concurrent first request waits here for the other's row, then does nothing.
        INSERT INTO ferry.users (id, issuer, subject) VALUES (v_id, p_issuer, p_subject)
        ON CONFLICT DO NOTHING;
    ELSIF v_disabled IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'FR401', MESSAGE = 'invalid token';
    END IF;
    PERFORM set_config('ferry.user_id', v_id::text, true);
    PERFORM set_config('ferry.claims', p_claims, true);
    RETURN v_id::text;
END
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.sign_in_external(p_issuer text, p_subject text, p_claims text, p_lookup_name text)
 RETURNS text
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_id uuid := ferry.external_user_id(p_issuer, p_subject);
    -- The shape GET /v1/users/lookup takes (ASCII, so lower() is the same in every collation); else none.
    v_lookup text := CASE WHEN p_lookup_name ~ '^[A-Za-z0-9_][A-Za-z0-9_.@+-]*$' AND octet_length(p_lookup_name) <= 320
                          THEN p_lookup_name END;
    v_disabled timestamptz;
    v_found boolean;
    v_stored text;
BEGIN
    SELECT true, u.disabled_at, u.lookup_name INTO v_found, v_disabled, v_stored FROM ferry.users u WHERE u.id = v_id;
    IF v_found IS NULL THEN
        -- A concurrent first request waits here for the other's row, then does nothing.
        INSERT INTO ferry.users (id, issuer, subject, lookup_name) VALUES (v_id, p_issuer, p_subject, v_lookup)
        ON CONFLICT DO NOTHING;
    ELSIF v_disabled IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'FR401', MESSAGE = 'invalid token';
    ELSIF v_stored IS DISTINCT FROM v_lookup THEN
        UPDATE ferry.users u SET lookup_name = v_lookup WHERE u.id = v_id;
    END IF;
    PERFORM set_config('ferry.user_id', v_id::text, true);
    PERFORM set_config('ferry.claims', p_claims, true);
    RETURN v_id::text;
END
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.stamp()
 RETURNS xid8
 LANGUAGE sql
RETURN COALESCE((NULLIF(current_setting('ferry.stamp'::text, true), ''::text))::xid8, ferry.take_stamp())
;
GRANT EXECUTE TO PUBLIC

CREATE OR REPLACE FUNCTION ferry.stamp_key(p_value xid8)
 RETURNS integer
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
RETURN (((((p_value)::text)::bigint & '4294967295'::bigint) - CASE WHEN ((((p_value)::text)::bigint & '2147483648'::bigint) <> 0) THEN '4294967296'::bigint ELSE (0)::bigint END))::integer
;
GRANT EXECUTE TO PUBLIC

CREATE OR REPLACE FUNCTION ferry.streams_of(p_schema name)
 RETURNS TABLE(name text, scope_name name)
 LANGUAGE sql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
    SELECT s.name, c.relname FROM ferry.sync_streams s
      JOIN pg_class c ON c.oid = s.scope_table JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = p_schema ORDER BY 1
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.sync_before_delete()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
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
$function$
;

CREATE OR REPLACE FUNCTION ferry.sync_before_insert()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    NEW.revision := 1;
    NEW.last_modified := ferry.now_ms();
    NEW._ferry_xid := ferry.stamp();
    NEW._ferry_writer := ferry.current_user_id();
    NEW._ferry_field_revisions := '{}'::jsonb;
    NEW.is_deleted := coalesce(NEW.is_deleted, false);
    RETURN NEW;
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.sync_before_truncate()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    IF current_setting('ferry.purging', true) = 'on' THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION USING ERRCODE = '55000',
        MESSAGE = format('%s is synced: TRUNCATE would hide deletes from clients', TG_RELID::regclass),
        HINT = 'Delete rows (they become tombstones), or SET ferry.purging = on to really remove them.';
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.sync_before_update()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    IF NEW.id IS DISTINCT FROM OLD.id THEN
        RAISE EXCEPTION USING ERRCODE = '42501',
            MESSAGE = format('the id of a synced row cannot change (%s)', TG_RELID::regclass);
    END IF;
    NEW.revision := OLD.revision + 1;
    NEW.last_modified := greatest(ferry.now_ms(), OLD.last_modified + 1);
    NEW._ferry_xid := ferry.stamp();
    NEW._ferry_writer := ferry.current_user_id();
    NEW._ferry_field_revisions := OLD._ferry_field_revisions
        || ferry.changed_fields(to_jsonb(NEW), to_jsonb(OLD), NEW.revision);
    RETURN NEW;
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.sync_child(p_table regclass, parent name, links name[] DEFAULT '{}'::name[], fixed name[] DEFAULT '{}'::name[], read_only name[] DEFAULT '{}'::name[])
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    PERFORM ferry.rules_add(p_table, 'child', sync_child.parent,
                            ferry.rules_synced_reference(p_table, sync_child.parent, 'parent'), NULL,
                            sync_child.links, sync_child.fixed, sync_child.read_only);
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.sync_grant(p_table regclass, scope name, through name, fixed name[] DEFAULT '{}'::name[], read_only name[] DEFAULT '{}'::name[])
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_scope regclass;
    v_through regclass;
BEGIN
    IF sync_grant.scope = sync_grant.through THEN
        RAISE EXCEPTION USING ERRCODE = '22023',
            MESSAGE = format('%s.%I is named as both scope and through: a grant reads one row through the members of another',
                             p_table, sync_grant.scope);
    END IF;
    PERFORM ferry.rules_column_type(p_table, sync_grant.scope, 'scope');
    v_scope := ferry.rules_reference(p_table, sync_grant.scope);
    IF v_scope IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = '42830',
            MESSAGE = format('%s.%I (named as scope) is not a foreign key: a grant rule needs a foreign key to the table it grants',
                             p_table, sync_grant.scope),
            HINT = format('ALTER TABLE %s ADD FOREIGN KEY (%I) REFERENCES <the granted table>;', p_table, sync_grant.scope);
    END IF;
    IF NOT EXISTS (SELECT 1 FROM ferry.sync_rules r WHERE r.table_oid = v_scope AND r.kind = 'owned') THEN
        RAISE EXCEPTION USING ERRCODE = '55000',
            MESSAGE = format('%s.%I (named as scope) points at %s, which has no owned rule: a grant shares an owned row (its owner grants it)',
                             p_table, sync_grant.scope, v_scope),
            HINT = format('SELECT ferry.sync_owned(%L, owner => ...) first.', v_scope::text);
    END IF;
    PERFORM ferry.rules_column_type(p_table, sync_grant.through, 'through');
    v_through := ferry.rules_reference(p_table, sync_grant.through);
    IF v_through IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = '42830',
            MESSAGE = format('%s.%I (named as through) is not a foreign key: a grant rule needs a foreign key to the table whose members it reaches',
                             p_table, sync_grant.through),
            HINT = format('ALTER TABLE %s ADD FOREIGN KEY (%I) REFERENCES <the shared table>;', p_table, sync_grant.through);
    END IF;
    IF v_through = v_scope OR v_through = p_table OR v_scope = p_table THEN
        RAISE EXCEPTION USING ERRCODE = '22023',
            MESSAGE = format('%s.%I and %s.%I (named as scope and through) must point at two other tables, not %s and %s',
                             p_table, sync_grant.scope, p_table, sync_grant.through, v_scope, v_through);
    END IF;
    IF NOT EXISTS (SELECT 1 FROM ferry.sync_rules r WHERE r.table_oid = v_through AND r.kind = 'owned') THEN
        RAISE EXCEPTION USING ERRCODE = '55000',
            MESSAGE = format('%s.%I (named as through) points at %s, which has no owned rule: a grant reaches the members of an owned table',
                             p_table, sync_grant.through, v_through),
            HINT = format('SELECT ferry.sync_owned(%L, owner => ...) and ferry.sync_members(<its members table>, scope => ...) first.',
                          v_through::text);
    END IF;
    IF NOT EXISTS (SELECT 1 FROM ferry.sync_rules r WHERE r.target_table = v_through AND r.kind = 'members') THEN
        RAISE EXCEPTION USING ERRCODE = '55000',
            MESSAGE = format('%s.%I (named as through) points at %s, which no members rule shares: a grant reaches that table''s members',
                             p_table, sync_grant.through, v_through),
            HINT = format('SELECT ferry.sync_members(<the table of %s''s members>, scope => ..., member => ...) first.', v_through::text);
    END IF;
    PERFORM ferry.rules_add(p_table, 'grant', sync_grant.scope, v_scope, sync_grant.through, '{}',
                            sync_grant.fixed, sync_grant.read_only);
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.sync_hints_rows(p_table regclass)
 RETURNS boolean
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
    SELECT NOT ferry.rules_private_members(p_table)
           AND NOT EXISTS (SELECT 1 FROM ferry.sync_scope_columns(p_table) c WHERE NOT c.plain);
$function$
;

CREATE OR REPLACE FUNCTION ferry.sync_hints_send_source(p_indent text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
RETURN (p_indent || replace('IF pg_catalog.current_setting(''ferry.hint_mode'', true) IS DISTINCT FROM ''collect'' THEN
    FOREACH v_key IN ARRAY v_out LOOP
        PERFORM pg_catalog.pg_notify(''ferry_changes'', v_key);
    END LOOP;
ELSE
    v_hints := COALESCE(pg_catalog.current_setting(''ferry.hints'', true), '''');
    v_added := false;
    FOREACH v_key IN ARRAY v_out LOOP
        IF pg_catalog.strpos(E''\n'' || v_hints, E''\n'' || v_key || E''\n'') = 0 THEN
            IF pg_catalog.octet_length(v_hints) > 65536 THEN
                PERFORM pg_catalog.pg_notify(''ferry_changes'', v_key);
            ELSE
                v_hints := v_hints || v_key || E''\n'';
                v_added := true;
            END IF;
        END IF;
    END LOOP;
    IF v_added THEN
        v_hints := pg_catalog.set_config(''ferry.hints'', v_hints, true);
    END IF;
END IF;'::text, '
'::text, ('
'::text || p_indent)))
;

CREATE OR REPLACE FUNCTION ferry.sync_hints_source(p_table regclass)
 RETURNS text
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_lines text := '';
    v_args text := '';
    v_n int := 1;
    v_scope record;
BEGIN
    IF NOT ferry.sync_hints_rows(p_table) THEN
        RETURN NULL;
    END IF;
    FOR v_scope IN SELECT c.scope_oid, c.col FROM ferry.sync_scope_columns(p_table) c LOOP
        v_n := v_n + 1;
        v_lines := v_lines || format(E'%%1$s %s s %s %%%s$s\n', p_table::oid, v_scope.scope_oid, v_n);
        v_args := v_args || format(', ($1).%I', v_scope.col);
    END LOOP;
    RETURN format($body$
SELECT CASE WHEN pg_catalog.current_setting('ferry.hint_mode', true) OPERATOR(pg_catalog.=) 'collect'
             AND COALESCE(pg_catalog.current_setting('ferry.hints', true), '') OPERATOR(pg_catalog.=) ''
       THEN pg_catalog.set_config('ferry.hints', pg_catalog.format(%1$L, ferry.stamp()%2$s,
              COALESCE('u ' OPERATOR(pg_catalog.||) NULLIF(pg_catalog.current_setting('ferry.user_id', true), ''), '*')), true)
              IS NOT NULL
        AND pg_catalog.set_config('ferry.hinted', %3$L, true) IS NOT NULL
       ELSE pg_catalog.set_config('ferry.hinted', '', true) IS NULL END
$body$, v_lines || format(E'%%1$s %s %%%s$s\n', p_table::oid, v_n + 1), v_args, p_table::oid::text);
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.sync_mark_source(p_table regclass)
 RETURNS text
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    IF NOT ferry.sync_hints_rows(p_table) THEN
        RETURN NULL;
    END IF;
    RETURN format($body$
SELECT CASE WHEN pg_catalog.current_setting('ferry.hint_mode', true) OPERATOR(pg_catalog.=) 'collect'
       THEN pg_catalog.set_config('ferry.hinted', %1$L, true) IS NOT NULL END
$body$, p_table::oid::text);
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.sync_members(p_table regclass, scope name, member name DEFAULT 'user_id'::name, fixed name[] DEFAULT '{}'::name[], read_only name[] DEFAULT '{}'::name[])
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_scope regclass;
    v_type text;
BEGIN
    PERFORM ferry.rules_column_type(p_table, sync_members.scope, 'scope');
    v_scope := ferry.rules_reference(p_table, sync_members.scope);
    IF v_scope IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = '42830',
            MESSAGE = format('%s.%I (named as scope) is not a foreign key: a membership rule needs a foreign key to the table it shares',
                             p_table, sync_members.scope),
            HINT = format('ALTER TABLE %s ADD FOREIGN KEY (%I) REFERENCES <the shared table>;', p_table, sync_members.scope);
    END IF;
    IF NOT EXISTS (SELECT 1 FROM ferry.sync_rules r WHERE r.table_oid = v_scope AND r.kind = 'owned') THEN
        RAISE EXCEPTION USING ERRCODE = '55000',
            MESSAGE = format('%s.%I points at %s, which has no owned rule: members share an owned table (its owner adds and removes them)',
                             p_table, sync_members.scope, v_scope),
            HINT = format('SELECT ferry.sync_owned(%L, owner => ...) first.', v_scope::text);
    END IF;
    v_type := ferry.rules_column_type(p_table, sync_members.member, 'member');
    IF v_type <> 'uuid' THEN
        RAISE EXCEPTION USING ERRCODE = '42804',
            MESSAGE = format('%s.%I (named as member) must be uuid, the user''s id, not %s', p_table, sync_members.member, v_type);
    END IF;
    PERFORM ferry.rules_add(p_table, 'members', sync_members.scope, v_scope, sync_members.member, '{}',
                            sync_members.fixed, sync_members.read_only);
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.sync_notify_source(p_table regclass)
 RETURNS text
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_scopes text := '';
    v_scope record;
    v_private record;
BEGIN
    SELECT m.member_column AS member, m.rule_column AS col, m.target_table AS scope_table, o.rule_column AS owner
      INTO v_private
      FROM ferry.sync_rules m
      JOIN ferry.sync_rules o ON o.table_oid = m.target_table AND o.kind = 'owned'
     WHERE m.table_oid = p_table AND m.kind = 'members' AND ferry.rules_private_members(p_table);
    FOR v_scope IN SELECT c.scope_oid, c.col FROM ferry.sync_scope_columns(p_table) c LOOP
        IF v_private.scope_table::oid = v_scope.scope_oid AND v_private.col = v_scope.col THEN
            v_scopes := v_scopes || format($private$
    -- Private member rows: their members and their scope rows' owners.
    IF TG_OP = 'UPDATE' THEN
        SELECT pg_catalog.count(k.id), pg_catalog.count(s.id), pg_catalog.array_agg(DISTINCT s.%4$I::pg_catalog.text) FILTER (WHERE s.%4$I IS NOT NULL)
          INTO v_wanted, v_found, v_owners
          FROM (SELECT n.%1$I AS id FROM new_rows n UNION SELECT o.%1$I FROM old_rows o) k
          LEFT JOIN %3$s s ON s.id = k.id
         WHERE k.id IS NOT NULL;
        SELECT pg_catalog.array_agg(DISTINCT u.k) INTO v_keys
          FROM (SELECT n.%2$I::pg_catalog.text AS k FROM new_rows n UNION ALL SELECT o.%2$I::pg_catalog.text FROM old_rows o) u
         WHERE u.k IS NOT NULL;
    ELSE
        SELECT pg_catalog.count(k.id), pg_catalog.count(s.id), pg_catalog.array_agg(DISTINCT s.%4$I::pg_catalog.text) FILTER (WHERE s.%4$I IS NOT NULL)
          INTO v_wanted, v_found, v_owners
          FROM (SELECT DISTINCT n.%1$I AS id FROM new_rows n) k
          LEFT JOIN %3$s s ON s.id = k.id
         WHERE k.id IS NOT NULL;
        SELECT pg_catalog.array_agg(DISTINCT n.%2$I::pg_catalog.text) INTO v_keys FROM new_rows n WHERE n.%2$I IS NOT NULL;
    END IF;
    IF v_found = v_wanted THEN
        v_keys := array(SELECT DISTINCT x FROM pg_catalog.unnest(coalesce(v_keys, '{}') || coalesce(v_owners, '{}')) x
                         WHERE x IS DISTINCT FROM v_user ORDER BY x);
        IF pg_catalog.cardinality(v_keys) > 100 THEN
            v_everyone := true;
        ELSE
            FOREACH v_key IN ARRAY v_keys LOOP
                v_out := v_out || (v_head || 'u ' || v_key);
            END LOOP;
        END IF;
        v_keys := NULL;
    ELSE$private$, v_scope.col, v_private.member,
                (SELECT format('%I.%I', n.nspname, c.relname) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                  WHERE c.oid = v_private.scope_table),
                v_private.owner);
        END IF;
        v_scopes := v_scopes || format($scope$
    IF TG_OP = 'UPDATE' THEN
        SELECT pg_catalog.array_agg(DISTINCT u.k) INTO v_keys
          FROM (SELECT n.%1$I::pg_catalog.text AS k FROM new_rows n UNION ALL SELECT o.%1$I::pg_catalog.text FROM old_rows o) u
         WHERE u.k IS NOT NULL;
    ELSE
        SELECT pg_catalog.array_agg(DISTINCT n.%1$I::pg_catalog.text) INTO v_keys FROM new_rows n WHERE n.%1$I IS NOT NULL;
    END IF;
    IF pg_catalog.cardinality(v_keys) > 100 THEN
        v_everyone := true;
    ELSIF v_keys IS NOT NULL THEN
        FOREACH v_key IN ARRAY v_keys LOOP
            IF pg_catalog.octet_length(v_key) > 1000 THEN
                v_everyone := true;
            ELSE
                v_out := v_out || (v_head || 's %2$s ' || v_key);
            END IF;
        END LOOP;
    END IF;$scope$, v_scope.col, v_scope.scope_oid);
        IF v_private.scope_table::oid = v_scope.scope_oid AND v_private.col = v_scope.col THEN
            v_scopes := v_scopes || E'\n    END IF;';
        END IF;
    END LOOP;
    RETURN format($body$
-- Generated by ferry.refresh_sync_trigger for the table with oid %1$s; do not edit.
DECLARE
    v_head pg_catalog.text;
    v_user pg_catalog.text;
    v_everyone pg_catalog.bool;
    v_keys pg_catalog.text[];
    v_key pg_catalog.text;
    v_out pg_catalog.text[];
    v_hints pg_catalog.text;
    v_added pg_catalog.bool;%3$s
BEGIN
    -- Ferry's one-row UPDATE marked this statement in its RETURNING and makes
    -- its hints itself (ferry.sync_mark_source; the previous release's
    -- ferry.sync_hints_source collected them there): clear the mark, so that it
    -- serves this statement only, and return before anything else is set up. Depth 1:
    -- this statement's own trigger, not that of a write another trigger made.
    -- One expression (PL/pgSQL sets up each again in every transaction), in
    -- parentheses: PL/pgSQL would end an IF's condition at the CASE's THEN.
    IF (CASE WHEN pg_catalog.current_setting('ferry.hinted', true) = '%1$s' AND pg_catalog.pg_trigger_depth() = 1
             THEN pg_catalog.set_config('ferry.hinted', '', true) IS NOT NULL END) THEN
        RETURN NULL;
    END IF;
    v_user := nullif(pg_catalog.current_setting('ferry.user_id', true), '');
    v_everyone := v_user IS NULL;
    v_out := '{}';
    -- A statement that wrote no row (an UPDATE that matched none) neither
    -- stamps nor hints: stamping would hold the feed for a transaction that
    -- has written no synced row. The row triggers stamped before any row.
    IF coalesce(pg_catalog.current_setting('ferry.stamp', true), '') = '' AND NOT EXISTS (SELECT FROM new_rows) THEN
        RETURN NULL;
    END IF;
    v_head := ferry.stamp()::pg_catalog.text || ' %1$s ';%2$s
    IF v_everyone THEN
        v_out := v_out || (v_head || '*');
    ELSE
        v_out := v_out || (v_head || 'u ' || v_user);
    END IF;
%4$s
    RETURN NULL;
END
$body$, p_table::oid, v_scopes, CASE WHEN v_private.scope_table IS NOT NULL THEN '
    v_wanted pg_catalog.int8;
    v_found pg_catalog.int8;
    v_owners pg_catalog.text[];' ELSE '' END, ferry.sync_hints_send_source('    '));
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.sync_owned(p_table regclass, owner name DEFAULT 'owner_id'::name, links name[] DEFAULT '{}'::name[], fixed name[] DEFAULT '{}'::name[], read_only name[] DEFAULT '{}'::name[])
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_type text := ferry.rules_column_type(p_table, sync_owned.owner, 'owner');
BEGIN
    IF v_type <> 'uuid' THEN
        RAISE EXCEPTION USING ERRCODE = '42804',
            MESSAGE = format('%s.%I (named as owner) must be uuid, the user''s id, not %s', p_table, sync_owned.owner, v_type);
    END IF;
    -- Validated before anything changes: the rule's other columns, and the table's shape.
    PERFORM ferry.rules_add(p_table, 'owned', sync_owned.owner, NULL, NULL, sync_owned.links, sync_owned.fixed,
                            sync_owned.read_only);
    EXECUTE format('ALTER TABLE %s ALTER COLUMN %I SET DEFAULT ferry.current_user_id()', p_table, sync_owned.owner);
    IF NOT (SELECT a.attnotnull FROM pg_attribute a WHERE a.attrelid = p_table AND a.attname = sync_owned.owner) THEN
        EXECUTE format('ALTER TABLE %s ALTER COLUMN %I SET NOT NULL', p_table, sync_owned.owner);
    END IF;
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.sync_public(p_table regclass, flag name)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_type text := ferry.rules_column_type(p_table, sync_public.flag, 'flag');
BEGIN
    IF NOT EXISTS (SELECT 1 FROM ferry.sync_rules r WHERE r.table_oid = p_table AND r.kind = 'owned') THEN
        RAISE EXCEPTION USING ERRCODE = '55000',
            MESSAGE = format('%s has no owned rule: only an owned table''s rows can be made public', p_table),
            HINT = format('SELECT ferry.sync_owned(%L, owner => ...) first.', p_table::text);
    END IF;
    IF v_type <> 'boolean' THEN
        RAISE EXCEPTION USING ERRCODE = '42804',
            MESSAGE = format('%s.%I (named as flag) must be boolean, not %s', p_table, sync_public.flag, v_type);
    END IF;
    UPDATE ferry.sync_rules SET public_column = sync_public.flag WHERE table_oid = p_table;
    EXECUTE format('DROP TRIGGER IF EXISTS zz_ferry_rules_public ON %s', p_table);
    EXECUTE format('CREATE TRIGGER zz_ferry_rules_public AFTER UPDATE OF %I ON %s FOR EACH ROW '
                   'EXECUTE FUNCTION ferry.rules_public_changed(%L)', sync_public.flag, p_table, sync_public.flag);
    PERFORM ferry.refresh_sync_rules();
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.sync_reach_columns(p_table regclass)
 RETURNS text[]
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
    SELECT array_agg(s.member_column ORDER BY s.member_column)
      FROM (SELECT DISTINCT s.member_column::text AS member_column FROM ferry.access_scopes s
              JOIN pg_attribute a ON a.attrelid = s.member_table AND a.attname = s.member_column AND NOT a.attisdropped
             WHERE s.member_table = p_table AND s.scope_table <> p_table) s
     WHERE EXISTS (SELECT 1 FROM pg_attribute a
                    WHERE a.attrelid = p_table AND a.attname = 'id' AND a.attnum > 0 AND NOT a.attisdropped)
$function$
;

CREATE OR REPLACE FUNCTION ferry.sync_reach_source(p_table regclass)
 RETURNS text
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    IF ferry.sync_reach_columns(p_table) IS NULL THEN
        RETURN NULL;
    END IF;
    RETURN format($body$
-- Generated by ferry.refresh_sync_reach for the table with oid %1$s; do not edit.
DECLARE
    v_lost text;
BEGIN
    IF nullif(current_setting('ferry.user_id', true), '') IS NULL THEN
        RETURN NULL;
    END IF;
    IF TG_LEVEL = 'ROW' THEN
        -- An UPDATE that moved this row (the trigger's WHEN clause), after its foreign-key check.
        IF NOT EXISTS (SELECT 1 FROM %2$s t WHERE t.id = NEW.id) THEN
            v_lost := NEW.id::text;
        END IF;
    ELSE
        SELECT n.id::text INTO v_lost FROM new_rows n
         WHERE NOT EXISTS (SELECT 1 FROM %2$s t WHERE t.id = n.id) LIMIT 1;
    END IF;
    IF v_lost IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = '42501',
            MESSAGE = format('new row violates row-level security policy for table "%%s"', %3$L),
            DETAIL = 'The writer lost access to the row''s scope while the write waited for it.';
    END IF;
    RETURN NULL;
END
$body$, p_table::oid, p_table, (SELECT c.relname FROM pg_class c WHERE c.oid = p_table));
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.sync_row_hints_source(p_table regclass)
 RETURNS text[]
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_new text := '';
    v_moved text := '';
    v_scope record;
BEGIN
    IF NOT ferry.sync_hints_rows(p_table) THEN
        RETURN NULL;
    END IF;
    FOR v_scope IN SELECT c.scope_oid, c.col FROM ferry.sync_scope_columns(p_table) c LOOP
        v_new := v_new || CASE WHEN v_new = '' THEN '' ELSE ', ' END
                 || format(E'v_line || \'s %s \' || NEW.%I::pg_catalog.text', v_scope.scope_oid, v_scope.col);
        v_moved := v_moved || format(E'
        IF OLD.%1$I IS DISTINCT FROM NEW.%1$I THEN
            v_out := v_out || (v_line || \'s %2$s \' || OLD.%1$I::pg_catalog.text);
        END IF;', v_scope.col, v_scope.scope_oid);
    END LOOP;
    RETURN ARRAY[E'
    v_line pg_catalog.text;
    v_out pg_catalog.text[];
    v_key pg_catalog.text;
    v_hints pg_catalog.text;
    v_added pg_catalog.bool;',
    format($block$
    -- Live hints (ferry.sync_row_hints_source): this row's, unless Ferry's one-row UPDATE
    -- wrote it (ferry.made, set in its SET list to this table's oid and this row's id) and
    -- makes them itself.
    IF pg_catalog.current_setting('ferry.made', true) IS DISTINCT FROM '%1$s ' || NEW.id::pg_catalog.text THEN
        v_line := v_stamp::pg_catalog.text || ' %1$s ';
        v_out := ARRAY[%2$s]::pg_catalog.text[];%3$s
        v_out := v_out || (v_line || COALESCE('u ' || NULLIF(pg_catalog.current_setting('ferry.user_id', true), ''), '*'));
%4$s
    END IF;$block$, p_table::oid::text, v_new, v_moved, ferry.sync_hints_send_source('        '))];
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.sync_scope_columns(p_table regclass)
 RETURNS TABLE(scope_oid oid, col name, plain boolean)
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
    SELECT s.scope_table::oid, s.member_column,
           a.attnotnull AND (ferry.base_type(a.atttypid, a.atttypmod)).base_type
                            IN ('uuid'::regtype, 'int2'::regtype, 'int4'::regtype, 'int8'::regtype)
      FROM ferry.access_scopes s
      JOIN pg_attribute a ON a.attrelid = s.member_table AND a.attname = s.member_column AND NOT a.attisdropped
     WHERE s.member_table = p_table
     ORDER BY s.scope_table::oid;
$function$
;

CREATE OR REPLACE FUNCTION ferry.sync_stream(p_name text, scope regclass)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
BEGIN
    IF p_name IS NULL OR p_name !~ '^[a-z][a-z0-9_]{0,62}$' THEN
        RAISE EXCEPTION USING ERRCODE = '22023',
            MESSAGE = format('%L is not a stream name: lower-case letters, digits and _, starting with a letter', p_name);
    END IF;
    IF NOT EXISTS (SELECT 1 FROM ferry.sync_rules r WHERE r.table_oid = sync_stream.scope AND r.kind = 'owned') THEN
        RAISE EXCEPTION USING ERRCODE = '55000',
            MESSAGE = format('%s has no owned rule: a stream is a row of an owned table and what hangs from it', sync_stream.scope),
            HINT = format('SELECT ferry.sync_owned(%L, owner => ...) first.', sync_stream.scope::text);
    END IF;
    INSERT INTO ferry.sync_streams (name, scope_table) VALUES (p_name, sync_stream.scope)
    ON CONFLICT (name) DO UPDATE SET scope_table = excluded.scope_table;
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.sync_update_source(p_table regclass)
 RETURNS text
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_natts int;
    v_present text := '';
    v_compare text;
    v_hints text[];
    v_col record;
BEGIN
    SELECT c.relnatts INTO v_natts FROM pg_class c WHERE c.oid = p_table;
    -- The fields, as ferry.changed_fields picks them from to_jsonb(row).
    FOR v_col IN
        SELECT a.attname::text AS name, a.attnum
          FROM pg_attribute a
         WHERE a.attrelid = p_table AND a.attnum > 0 AND NOT a.attisdropped
           AND a.attname NOT IN ('id', 'revision', 'last_modified')
           AND left(a.attname, 7) <> '_ferry_'
         ORDER BY a.attnum
    LOOP
        v_present := v_present || format(E'\n       AND pg_catalog.has_column_privilege(TG_RELID, %s::pg_catalog.int2, %L) IS NOT NULL',
                                         v_col.attnum, 'SELECT');
    END LOOP;
    -- One expression for every field (issue 47): PL/pgSQL sets up each expression of a
    -- trigger again in every transaction (~3,500 instructions before it runs), and a
    -- one-row PATCH is one transaction, so an IF per field cost more than comparing.
    -- A field that did not change maps to NULL, which jsonb_strip_nulls drops; at most
    -- 50 pairs a jsonb_build_object (PostgreSQL's 100 arguments), joined with ||.
    -- A field of a type whose text is its value (each value one text, each text one
    -- value: integers, booleans, uuids, dates, strings) is compared as text, in
    -- collation "C" (byte for byte, as jsonb compares strings): one function call
    -- instead of three (issue 47); so is a domain over one of them (its text is its base
    -- type's). Any other type through to_jsonb, as
    -- ferry.changed_fields compares it (numeric 1.0 and 1.00 are equal there, json
    -- has no equality). A cast to text exists for every type, so the expression
    -- plans whatever a column's type is by then.
    SELECT string_agg(format(E'pg_catalog.jsonb_build_object(%s)', pairs), E'\n            || ' ORDER BY chunk) INTO v_compare
      FROM (SELECT (n - 1) / 50 AS chunk,
                   string_agg(CASE WHEN as_text
                       THEN format(E'\n                %1$L, CASE WHEN NEW.%2$I::pg_catalog.text COLLATE pg_catalog."C" IS DISTINCT FROM OLD.%2$I::pg_catalog.text COLLATE pg_catalog."C" THEN NEW.revision END',
                                   name, name)
                       ELSE format(E'\n                %1$L, CASE WHEN pg_catalog.to_jsonb(NEW.%2$I) IS DISTINCT FROM pg_catalog.to_jsonb(OLD.%2$I) THEN NEW.revision END',
                                   name, name) END, ',' ORDER BY n) AS pairs
              FROM (SELECT a.attname::text AS name, row_number() OVER (ORDER BY a.attnum) AS n,
                           (ferry.base_type(a.atttypid, a.atttypmod)).base_type
                             IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype, 'bool'::regtype, 'uuid'::regtype,
                                 'date'::regtype, 'text'::regtype, 'varchar'::regtype) AS as_text
                      FROM pg_attribute a
                     WHERE a.attrelid = p_table AND a.attnum > 0 AND NOT a.attisdropped
                       AND a.attname NOT IN ('id', 'revision', 'last_modified')
                       AND left(a.attname, 7) <> '_ferry_') f
             GROUP BY (n - 1) / 50) c;
    -- Its live hints, for the tables that have no UPDATE statement trigger (functions/live.sql).
    v_hints := ferry.sync_row_hints_source(p_table);
    v_compare := format(E'\n        NEW._ferry_field_revisions := OLD._ferry_field_revisions\n'
                        '            || pg_catalog.jsonb_strip_nulls(%s);', coalesce(v_compare, E'\'{}\'::pg_catalog.jsonb'));
    RETURN format($body$
-- Generated by ferry.refresh_sync_trigger for the table with oid %1$s (%2$s attribute numbers); do not edit.
DECLARE
    v_stamp pg_catalog.xid8 := nullif(pg_catalog.current_setting('ferry.stamp', true), '')::pg_catalog.xid8;
    v_xid pg_catalog.xid8;
    v_void pg_catalog.text;%6$s
BEGIN
    IF NEW.id IS DISTINCT FROM OLD.id THEN
        RAISE EXCEPTION USING ERRCODE = '42501',
            MESSAGE = pg_catalog.format('the id of a synced row cannot change (%%s)', TG_RELID::pg_catalog.regclass);
    END IF;
    NEW.revision := OLD.revision + 1;
    NEW.last_modified := greatest(ferry.now_ms(), OLD.last_modified + 1);
    IF v_stamp IS NULL THEN
        -- ferry.take_stamp(), inline (keep the two alike): the transaction's first synced write.
        -- Assignments, not PERFORM: an assignment is a simple expression, a PERFORM a query.
        v_xid := pg_catalog.pg_current_xact_id();
        v_void := pg_catalog.pg_advisory_xact_lock_shared(1181905529, ferry.stamp_key(v_xid));
        v_stamp := greatest(v_xid, coalesce(pg_catalog.pg_sequence_last_value('ferry.stamp_floor'), 0)::pg_catalog.text::pg_catalog.xid8);
        IF v_stamp > v_xid
           AND coalesce(pg_catalog.pg_sequence_last_value('ferry.stamp_floor_taken'), 0) < v_stamp::pg_catalog.text::pg_catalog.int8 THEN
            v_void := pg_catalog.setval('ferry.stamp_floor_taken', v_stamp::pg_catalog.text::pg_catalog.int8);
        END IF;
        v_void := pg_catalog.set_config('ferry.stamp', v_stamp::pg_catalog.text, true);
    END IF;
    NEW._ferry_xid := v_stamp;
    NEW._ferry_writer := ferry.current_user_id();
    -- No column added since generation, none of these dropped: compare them.
    IF pg_catalog.has_column_privilege(TG_RELID, %3$s::pg_catalog.int2, 'SELECT') IS NULL%4$s THEN%5$s
    ELSE
        NEW._ferry_field_revisions := OLD._ferry_field_revisions
            || ferry.changed_fields(pg_catalog.to_jsonb(NEW), pg_catalog.to_jsonb(OLD), NEW.revision);
    END IF;%7$s
    RETURN NEW;
END
$body$, p_table::oid, v_natts, v_natts + 1, v_present, v_compare, coalesce(v_hints[1], ''), coalesce(v_hints[2], ''));
END
$function$
;

CREATE OR REPLACE FUNCTION ferry.take_stamp()
 RETURNS xid8
 LANGUAGE plpgsql
AS $function$
DECLARE
    v_xid xid8 := pg_catalog.pg_current_xact_id();
    v_stamp xid8;
    v_void pg_catalog.text;
BEGIN
    -- Assignments, not PERFORM (issue 47): an assignment is a simple expression, a PERFORM a query.
    v_void := pg_catalog.pg_advisory_xact_lock_shared(1181905529, ferry.stamp_key(v_xid));
    -- After the lock, never before (see above). NULL until the floor is first set.
    v_stamp := greatest(v_xid, coalesce(pg_catalog.pg_sequence_last_value('ferry.stamp_floor'), 0)::text::xid8);
    IF v_stamp > v_xid
       AND coalesce(pg_catalog.pg_sequence_last_value('ferry.stamp_floor_taken'), 0) < v_stamp::text::int8 THEN
        v_void := pg_catalog.setval('ferry.stamp_floor_taken', v_stamp::text::int8);
    END IF;
    v_void := pg_catalog.set_config('ferry.stamp', v_stamp::text, true);
    RETURN v_stamp;
END
$function$
;
GRANT EXECUTE TO PUBLIC

CREATE OR REPLACE FUNCTION ferry.type_chain(p_type oid, p_typmod integer)
 RETURNS TABLE(type oid, typmod integer, depth integer)
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
    WITH RECURSIVE d (type, typmod, depth) AS (
        SELECT p_type, p_typmod, 0
        UNION ALL
        SELECT t.typbasetype, t.typtypmod, d.depth + 1
          FROM pg_type t JOIN d ON t.oid = d.type
         WHERE t.typtype = 'd' AND d.depth < 32)
    SELECT d.type, d.typmod, d.depth FROM d;
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.user_by_name(p_name text)
 RETURNS TABLE(id uuid, name text, created_at bigint)
 LANGUAGE sql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
    SELECT u.id, u.name, floor(extract(epoch FROM u.created_at) * 1000)::bigint
      FROM ferry.users u WHERE u.name = p_name;
$function$
;
GRANT EXECUTE TO ferry_app

CREATE OR REPLACE FUNCTION ferry.user_findable(p_user ferry.users)
 RETURNS boolean
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
RETURN ((p_user).disabled_at IS NULL)
;

CREATE OR REPLACE FUNCTION ferry.window_keys(p_table regclass, p_columns name[], p_after xid8, p_upto xid8, p_limit integer)
 RETURNS text
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_rule ferry.sync_rules;
    v_column name;
    v_values text := 't.id::text';
    v_result text;
BEGIN
    SELECT r.* INTO v_rule FROM ferry.sync_rules r WHERE r.table_oid = p_table;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'ferry.window_keys: % has no sync rule', p_table USING ERRCODE = 'insufficient_privilege';
    END IF;
    FOREACH v_column IN ARRAY coalesce(p_columns, '{}') LOOP
        IF v_column IS DISTINCT FROM v_rule.rule_column AND v_column IS DISTINCT FROM v_rule.member_column THEN
            RAISE EXCEPTION 'ferry.window_keys: % is not a rule column of %', v_column, p_table USING ERRCODE = 'insufficient_privilege';
        END IF;
        v_values := v_values || format(', t.%I::text', v_column);
    END LOOP;
    EXECUTE format(
        'SELECT CASE WHEN count(*) > $3 THEN NULL ELSE coalesce(json_agg(json_build_array(%s)), ''[]'')::text END
           FROM (SELECT * FROM %s t WHERE t._ferry_xid > $1 AND t._ferry_xid < $2 LIMIT $3 + 1) t', v_values, p_table)
       INTO v_result USING p_after, p_upto, p_limit;
    RETURN v_result;
END
$function$
;
GRANT EXECUTE TO ferry_app
COMMENT 'The ids and rule columns of p_table''s rows changed in (p_after, p_upto) (NULL past p_limit): which users may read them, decided by the server for the default stream''s fan-out.'

CREATE OR REPLACE FUNCTION ferry.write_items(p_table regclass, p_sql text, p_items jsonb)
 RETURNS TABLE(status integer, body text, revision bigint, last_modified bigint, id text)
 LANGUAGE plpgsql
AS $function$
DECLARE
    v_first text;
    v_errors jsonb := '[]'::jsonb;
    v_failed int[] := '{}';
    v_rest jsonb;               -- items still to diagnose
    v_index int[];              -- their positions in p_items
    v_stack int[] := '{}';      -- pending (start, length) ranges over v_rest; the top is at the end
    v_start int;
    v_len int;
    v_chunk jsonb;
    v_item jsonb;
    v_at int;
    v_detail text;
    v_state text;
    v_constraint text;
    v_column text;
    v_message text;
    v_misfits jsonb;
    v_field text;
BEGIN
    BEGIN
        EXECUTE p_sql INTO status, body, revision, last_modified, id
          USING p_items, NULL::text, NULL::bigint[], false;
        RETURN NEXT;
        RETURN;
    EXCEPTION
        WHEN SQLSTATE 'FR400' THEN
            -- The statement's own checks failed for some items; the others may
            -- still break a constraint that only writing them shows.
            GET STACKED DIAGNOSTICS v_detail = PG_EXCEPTION_DETAIL;
            v_errors := coalesce(v_detail::jsonb -> 'errors', '[]'::jsonb);
            SELECT coalesce(array_agg((e.value ->> 'index')::int), '{}') INTO v_failed
              FROM jsonb_array_elements(v_errors) e WHERE e.value ->> 'index' IS NOT NULL;
        WHEN integrity_constraint_violation OR data_exception OR insufficient_privilege THEN
            GET STACKED DIAGNOSTICS v_first = MESSAGE_TEXT;
    END;

    SELECT coalesce(jsonb_agg(e.value ORDER BY e.ordinality), '[]'::jsonb),
           coalesce(array_agg((e.ordinality - 1)::int ORDER BY e.ordinality), '{}')
      INTO v_rest, v_index
      FROM jsonb_array_elements(p_items) WITH ORDINALITY e
     WHERE NOT ((e.ordinality - 1)::int = ANY (v_failed));
    IF jsonb_array_length(v_rest) > 0 THEN
        v_stack := ARRAY[0, jsonb_array_length(v_rest)];
    END IF;

    WHILE cardinality(v_stack) > 0 LOOP
        v_start := v_stack[cardinality(v_stack) - 1];
        v_len := v_stack[cardinality(v_stack)];
        v_stack := v_stack[1:cardinality(v_stack) - 2];
        SELECT jsonb_agg(e.value ORDER BY e.ordinality) INTO v_chunk
          FROM jsonb_array_elements(v_rest) WITH ORDINALITY e
         WHERE e.ordinality > v_start AND e.ordinality <= v_start + v_len;
        BEGIN
            EXECUTE p_sql USING v_chunk, NULL::text, NULL::bigint[], false;
        EXCEPTION
            WHEN SQLSTATE 'FR400' OR integrity_constraint_violation OR data_exception OR insufficient_privilege THEN
                IF v_len > 1 THEN
                    -- Split; the first half runs first.
                    v_stack := v_stack || ARRAY[v_start + v_len / 2, v_len - v_len / 2, v_start, v_len / 2];
                ELSE
                    v_at := v_index[v_start + 1];
                    v_item := v_chunk -> 0;
                    GET STACKED DIAGNOSTICS v_state = RETURNED_SQLSTATE, v_detail = PG_EXCEPTION_DETAIL,
                                            v_constraint = CONSTRAINT_NAME, v_column = COLUMN_NAME, v_message = MESSAGE_TEXT;
                    IF v_state = 'FR400' THEN
                        v_errors := v_errors || coalesce((
                            SELECT jsonb_agg(e.value || jsonb_build_object('index', v_at))
                              FROM jsonb_array_elements(v_detail::jsonb -> 'errors') e), '[]'::jsonb);
                    ELSE
                        -- A value PostgreSQL refused names no column: find the field(s).
                        v_misfits := CASE WHEN v_state LIKE '22%' AND v_column = '' THEN ferry.misfit_fields(p_table, v_item)
                                          ELSE '[]'::jsonb END;
                        IF jsonb_array_length(v_misfits) = 0 THEN
                            v_misfits := jsonb_build_array(v_column);
                        END IF;
                        FOR v_field IN SELECT jsonb_array_elements_text(v_misfits) LOOP
                            v_errors := v_errors || ferry.item_errors(
                                p_table, v_at, CASE WHEN jsonb_typeof(v_item) = 'object' THEN v_item -> 'id' END,
                                v_state, v_constraint, v_field, v_message);
                        END LOOP;
                    END IF;
                END IF;
        END;
    END LOOP;

    IF jsonb_array_length(v_errors) = 0 THEN
        -- Every item passes alone but not together: report the set-level error.
        v_errors := jsonb_build_array(jsonb_build_object(
            'index', NULL, 'id', NULL, 'status', 422, 'code', 'validation_failed', 'field', NULL,
            'reason', 'invalid_value', 'detail', v_first));
    END IF;
    SELECT jsonb_agg(e.value ORDER BY (e.value ->> 'index')::int, e.ordinality) INTO v_errors
      FROM jsonb_array_elements(v_errors) WITH ORDINALITY e;
    RAISE EXCEPTION USING ERRCODE = 'FR400', MESSAGE = 'request refused',
        DETAIL = jsonb_build_object('errors', v_errors)::text;
END
$function$
;
GRANT EXECUTE TO ferry_app

CREATE TRIGGER access_grants_notify AFTER INSERT ON ferry.access_grants REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ferry.access_log_notify();

CREATE TRIGGER access_revocations_notify AFTER INSERT ON ferry.access_revocations REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ferry.access_log_notify();

POLICY access_grants_own ON ferry.access_grants FOR SELECT TO PUBLIC
  USING ((user_id = ferry.current_user_id()))

POLICY access_revocations_own ON ferry.access_revocations FOR SELECT TO PUBLIC
  USING ((user_id = ferry.current_user_id()))

POLICY idempotency_keys_own ON ferry.idempotency_keys FOR ALL TO PUBLIC
  USING ((user_id = ferry.current_user_id()))
  WITH CHECK ((user_id = ferry.current_user_id()))
