WITH i AS (
  SELECT 0 AS idx, ($1::jsonb) -> 0 AS item
)
UPDATE "app"."terms" AS t SET ("word", "note", "rank") = (SELECT m."word", m."note", m."rank" FROM jsonb_populate_record(t, i.item - ARRAY['id', 'revision', 'last_modified', 'is_deleted']) m)
  FROM i
 WHERE t."id" = CASE WHEN $2::text ~ '^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$' THEN ($2::text)::uuid END
   AND jsonb_typeof(i.item) = 'object'
   AND NOT t."is_deleted"
   AND ($3::bigint[] IS NULL OR t."revision" = ANY ($3::bigint[]))
   AND ((CASE WHEN CASE WHEN jsonb_typeof(i.item -> 'revision') = 'number' THEN (i.item -> 'revision' #>> '{}')::numeric = trunc((i.item -> 'revision' #>> '{}')::numeric) AND (i.item -> 'revision' #>> '{}')::numeric BETWEEN 0 AND 9223372036854775807 ELSE false END THEN (i.item ->> 'revision')::numeric::bigint END) IS NULL AND ($3::bigint[] IS NOT NULL OR coalesce($4::boolean, false)) OR (CASE WHEN CASE WHEN jsonb_typeof(i.item -> 'revision') = 'number' THEN (i.item -> 'revision' #>> '{}')::numeric = trunc((i.item -> 'revision' #>> '{}')::numeric) AND (i.item -> 'revision' #>> '{}')::numeric BETWEEN 0 AND 9223372036854775807 ELSE false END THEN (i.item ->> 'revision')::numeric::bigint END) = t."revision")
   AND EXISTS (SELECT 1 FROM jsonb_populate_record(t, i.item - ARRAY['id', 'revision', 'last_modified', 'is_deleted']) m WHERE (m."word" IS DISTINCT FROM t."word" OR m."note" IS DISTINCT FROM t."note" OR m."rank" IS DISTINCT FROM t."rank") AND NOT (i.item ? 'set_id' AND (m."set_id" IS DISTINCT FROM t."set_id")))
RETURNING 200, json_build_array(CASE WHEN t."is_deleted" THEN json_build_object('id', t."id", 'set_id', t."set_id", 'revision', t."revision", 'last_modified', t."last_modified", 'is_deleted', true) ELSE json_build_object('id', t."id", 'set_id', t."set_id", 'word', t."word", 'note', t."note", 'rank', t."rank", 'revision', t."revision", 'last_modified', t."last_modified", 'is_deleted', t."is_deleted") END)::text, t."revision", t."last_modified", $2::text
