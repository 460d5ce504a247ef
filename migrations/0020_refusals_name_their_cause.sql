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
CREATE OR REPLACE FUNCTION ferry.item_errors(
    p_table regclass, p_index int, p_id jsonb, p_state text, p_constraint text, p_column text, p_message text
) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
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
$$;
