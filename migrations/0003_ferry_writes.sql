-- 0003_ferry_writes.sql: helpers for the resource write statements.
--
-- Applied by `ferry migrate` as the OWNER role, in one transaction, after
-- 0002. Ferry plans every create, update and delete as ONE set-based SQL
-- statement (see Sources/Ferry/Plan). Such a statement decides every item's
-- outcome itself (404, 410, 409, 412, 422 ...) and, when any item fails,
-- calls ferry.fail so that the statement, and with it the request's whole
-- pipelined transaction, aborts: nothing is written. The problem travels to
-- Ferry as JSON in the error's DETAIL.
--
-- Some failures only the write itself can detect (CHECK, UNIQUE, foreign
-- keys, row level security WITH CHECK, conversions). For a bulk request,
-- ferry.write_items runs the statement once for all items and, only if that
-- fails, bisects the items in subtransactions to find EVERY failing item;
-- then it raises ferry.fail's error with all of them. Still one round trip,
-- and still nothing written.

-- Aborts the current statement with SQLSTATE FR400; DETAIL is the problem JSON
-- ({"errors": [...]}). Declared to return json so it can stand in a CASE.
CREATE FUNCTION ferry.fail(p_problem json) RETURNS json
    LANGUAGE plpgsql VOLATILE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE EXCEPTION USING ERRCODE = 'FR400', MESSAGE = 'request refused', DETAIL = p_problem::text;
END
$$;

-- The columns a constraint or unique index of p_table covers, as a jsonb array of names.
CREATE FUNCTION ferry.constraint_columns(p_table regclass, p_name text) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(jsonb_agg(a.attname ORDER BY a.attnum), '[]'::jsonb)
      FROM pg_attribute a
     WHERE a.attrelid = p_table
       AND a.attnum = ANY (coalesce(
             (SELECT c.conkey FROM pg_constraint c WHERE c.conrelid = p_table AND c.conname = p_name LIMIT 1),
             (SELECT i.indkey::int2[] FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
               WHERE i.indrelid = p_table AND ic.relname = p_name LIMIT 1)));
$$;

-- The foreign key columns of p_table (named when row level security refuses a new row).
CREATE FUNCTION ferry.reference_columns(p_table regclass) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(jsonb_agg(DISTINCT a.attname), '[]'::jsonb)
      FROM pg_constraint c
      JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey)
     WHERE c.conrelid = p_table AND c.contype = 'f';
$$;

-- One error entry per field for a database error raised by item p_index.
CREATE FUNCTION ferry.item_errors(
    p_table regclass, p_index int, p_id jsonb, p_state text, p_constraint text, p_column text, p_message text
) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    WITH f AS (
        SELECT CASE
                 WHEN p_column <> '' THEN jsonb_build_array(p_column)
                 WHEN p_constraint <> '' THEN ferry.constraint_columns(p_table, p_constraint)
                 WHEN p_state = '42501' THEN ferry.reference_columns(p_table)
                 ELSE '[]'::jsonb
               END AS fields,
               CASE p_state
                 WHEN '23514' THEN 'check_violation'
                 WHEN '23505' THEN 'unique_violation'
                 WHEN '23503' THEN 'not_found'
                 WHEN '23502' THEN 'not_null'
                 WHEN '23P01' THEN 'exclusion_violation'
                 WHEN '42501' THEN 'not_allowed'
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
$$;

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
CREATE FUNCTION ferry.write_items(p_table regclass, p_sql text, p_items jsonb)
    RETURNS TABLE (status int, body text, revision bigint, last_modified bigint, id text)
    LANGUAGE plpgsql VOLATILE
AS $$
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
                        v_errors := v_errors || ferry.item_errors(
                            p_table, v_at, CASE WHEN jsonb_typeof(v_item) = 'object' THEN v_item -> 'id' END,
                            v_state, v_constraint, v_column, v_message);
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
$$;

REVOKE EXECUTE ON FUNCTION ferry.fail(json), ferry.constraint_columns(regclass, text),
    ferry.reference_columns(regclass), ferry.item_errors(regclass, int, jsonb, text, text, text, text),
    ferry.write_items(regclass, text, jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.fail(json), ferry.constraint_columns(regclass, text),
    ferry.reference_columns(regclass), ferry.item_errors(regclass, int, jsonb, text, text, text, text),
    ferry.write_items(regclass, text, jsonb) TO ferry_app;
