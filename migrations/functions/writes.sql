-- functions/writes.sql: Writes: ferry.write_items, its refusals (ferry.fail, item_errors), and batch idempotency.
--
-- A repeatable file (migrations/README.md): the current definition of each of its
-- functions, triggers and policies, applied by `ferry migrate` after the versioned
-- files whenever its checksum differs from the one recorded in
-- ferry.schema_repeatables. Change a function here, never in a new versioned file.
-- Every statement must be safe to run again on a database that already has it.
-- Each function keeps the comment of the versioned file that last defined it.

-- Aborts the current statement with SQLSTATE FR400; DETAIL is the problem JSON
-- ({"errors": [...]}). Declared to return json so it can stand in a CASE.
-- (Versioned definitions before this file: 0003.)
CREATE OR REPLACE FUNCTION ferry.fail(p_problem json)
 RETURNS json
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    RAISE EXCEPTION USING ERRCODE = 'FR400', MESSAGE = 'request refused', DETAIL = p_problem::text;
END
$function$;
REVOKE ALL ON FUNCTION ferry.fail(json) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.fail(json) TO ferry_app;

-- The columns a constraint or unique index of p_table covers, as a jsonb array of names;
-- failing those, the columns typed with a domain (or a domain over it) whose CHECK has
-- that name: a domain's error names no table nor column.
-- (Versioned definitions before this file: 0003.)
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
$function$;
REVOKE ALL ON FUNCTION ferry.constraint_columns(regclass,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.constraint_columns(regclass,text) TO ferry_app;

-- The foreign key columns of p_table (named when row level security refuses a new row).
-- (Versioned definitions before this file: 0003.)
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
$function$;
REVOKE ALL ON FUNCTION ferry.reference_columns(regclass) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.reference_columns(regclass) TO ferry_app;

-- The fields of the object p_item whose value alone does not read as its column's
-- type: a value PostgreSQL refuses (SQLSTATE class 22: an enum label it lacks, a
-- string too long for a varchar(n), a number past a numeric's precision, a date
-- that is none) names no column, so a refused write asks this which field it was.
-- Each value is read as jsonb_populate_record reads it (jsonb_to_record, one
-- column of the column's type), alone; JSON nulls are left to the NOT NULL checks.
-- Only on the error path: one subtransaction a field.
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
$function$;
REVOKE ALL ON FUNCTION ferry.misfit_fields(regclass,jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.misfit_fields(regclass,jsonb) TO ferry_app;

-- 0020_refusals_name_their_cause.sql: a write refused by a missing grant or by
-- Row Level Security names that cause, never an unrelated column.
--
-- Applied by `ferry migrate` as the OWNER role, in one transaction.
--
-- ferry.item_errors (0003) turned every SQLSTATE 42501 into reason not_allowed
-- on the table's foreign key columns: a guess that a policy had refused the row
-- because of what it points at. For a table whose `is_deleted` was left out of
-- the UPDATE grant, every DELETE then answered 422 on `owner_id`, "the caller
-- may not write this row", though the cause was the missing grant (issue 33).
-- Now the two causes are told apart by PostgreSQL's message and name no field:
--   not_allowed   Row Level Security refused the row ("new row violates
--                 row-level security policy"); Ferry's answer names the policies;
--   not_granted   the serve role lacks a privilege the write needs ("permission
--                 denied"); Ferry's answer names the grant.
-- Same signature, so the grants of 0003 carry over.
-- (Versioned definitions before this file: 0003, 0020.)
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
$function$;
REVOKE ALL ON FUNCTION ferry.item_errors(regclass,integer,jsonb,text,text,text,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.item_errors(regclass,integer,jsonb,text,text,text,text) TO ferry_app;

-- Runs a planned write statement for a bulk request. p_sql takes the items
-- as $1 (and $2 text, $3 bigint[], $4 boolean, NULL here) and returns one row
-- (status, body, revision, last_modified, id).
--
-- The fast path runs it once for all items. When that fails, the items not
-- already reported are bisected: a range that fails is split in two, a range
-- that passes stays applied (inside this doomed transaction, so conflicts
-- between items of the request, such as a unique pair sent twice, are found
-- too), and a single failing item is recorded. k bad items among n cost about
-- 2k·log2(n) runs instead of n. Then everything is rolled back by raising.
-- (Versioned definitions before this file: 0003.)
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
$function$;
REVOKE ALL ON FUNCTION ferry.write_items(regclass,text,jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.write_items(regclass,text,jsonb) TO ferry_app;

-- The state of p_key for the caller: 'new' (claimed; run the request),
-- 'in_use', or 'stored' with the stored request hash and response.
-- (Versioned definitions before this file: 0007.)
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
$function$;
REVOKE ALL ON FUNCTION ferry.idempotency_claim(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.idempotency_claim(text) TO ferry_app;

-- Stores the completed response of a claimed key, in the write's transaction.
-- (Versioned definitions before this file: 0007.)
CREATE OR REPLACE FUNCTION ferry.idempotency_store(p_key text, p_request_hash bytea, p_status integer, p_headers jsonb, p_body bytea, p_ttl_hours integer)
 RETURNS void
 LANGUAGE sql
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
BEGIN ATOMIC
 INSERT INTO ferry.idempotency_keys (user_id, key, request_hash, status, response_headers, response_body, expires_at)
   VALUES (ferry.current_user_id(), idempotency_store.p_key, idempotency_store.p_request_hash, idempotency_store.p_status, idempotency_store.p_headers, idempotency_store.p_body, (now() + make_interval(hours => idempotency_store.p_ttl_hours)));
END;
REVOKE ALL ON FUNCTION ferry.idempotency_store(text,bytea,integer,jsonb,bytea,integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.idempotency_store(text,bytea,integer,jsonb,bytea,integer) TO ferry_app;

-- Triggers and policies of this family's tables (they need the functions above).

DROP POLICY IF EXISTS idempotency_keys_own ON ferry.idempotency_keys;
CREATE POLICY idempotency_keys_own ON ferry.idempotency_keys FOR ALL TO PUBLIC
    USING ((user_id = ferry.current_user_id()))
    WITH CHECK ((user_id = ferry.current_user_id()));
