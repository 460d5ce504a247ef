WITH i AS (
  SELECT 0 AS idx, ($1::jsonb) -> 0 AS item
)
UPDATE "app"."terms" AS t SET "is_deleted" = true
  FROM i
 WHERE t."id" = CASE WHEN $2::text ~ '^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$' THEN ($2::text)::uuid END
   AND NOT t."is_deleted"
   AND ($3::bigint[] IS NULL OR t."revision" = ANY ($3::bigint[]))
   AND ((CASE WHEN CASE WHEN jsonb_typeof(i.item -> 'revision') = 'number' THEN (i.item -> 'revision' #>> '{}')::numeric = trunc((i.item -> 'revision' #>> '{}')::numeric) AND (i.item -> 'revision' #>> '{}')::numeric BETWEEN 0 AND 9223372036854775807 ELSE false END THEN (i.item ->> 'revision')::numeric::bigint END) IS NULL AND ($3::bigint[] IS NOT NULL OR coalesce($4::boolean, false)) OR (CASE WHEN CASE WHEN jsonb_typeof(i.item -> 'revision') = 'number' THEN (i.item -> 'revision' #>> '{}')::numeric = trunc((i.item -> 'revision' #>> '{}')::numeric) AND (i.item -> 'revision' #>> '{}')::numeric BETWEEN 0 AND 9223372036854775807 ELSE false END THEN (i.item ->> 'revision')::numeric::bigint END) = t."revision")
RETURNING 200, json_build_array(json_build_object('id', t."id", 'set_id', t."set_id", 'revision', t."revision", 'last_modified', t."last_modified", 'is_deleted', true))::text,
          t."revision", t."last_modified", $2::text
