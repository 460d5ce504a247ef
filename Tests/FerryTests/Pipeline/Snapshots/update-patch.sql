WITH i AS (
  SELECT 0 AS idx, ($1::jsonb) -> 0 AS item
),
k AS (
  SELECT x.*, CASE WHEN x.raw_id ~ '^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$' THEN (x.raw_id)::uuid END AS id,
         count(*) OVER (PARTITION BY lower(x.raw_id)) AS dups
    FROM (SELECT i.idx, i.item,
                 coalesce($2::text, CASE WHEN jsonb_typeof(i.item) = 'object' THEN i.item ->> 'id' END) AS raw_id,
                 CASE WHEN jsonb_typeof(i.item) = 'object' THEN CASE WHEN CASE WHEN jsonb_typeof(i.item -> 'revision') = 'number' THEN (i.item -> 'revision' #>> '{}')::numeric = trunc((i.item -> 'revision' #>> '{}')::numeric) AND (i.item -> 'revision' #>> '{}')::numeric BETWEEN 0 AND 9223372036854775807 ELSE false END THEN (i.item ->> 'revision')::numeric::bigint END END AS base
            FROM i) x
),
fe AS (
  SELECT x.idx, json_build_object('index', x.idx, 'id', coalesce(to_jsonb($2::text), x.item -> 'id'), 'status', 422,
           'code', CASE WHEN x.reason = 'unknown_field' THEN 'unknown_field' ELSE 'validation_failed' END,
           'field', x.field, 'reason', x.reason) AS err
    FROM (
      SELECT i.idx, i.item, k.key AS field, CASE k.key WHEN 'id' THEN CASE WHEN $2::text IS NOT NULL THEN NULL WHEN jsonb_typeof(k.value) = 'null' THEN 'required' WHEN NOT ((jsonb_typeof(k.value) = 'string' AND (k.value #>> '{}') ~ '^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$')) THEN 'wrong_type' END WHEN 'set_id' THEN CASE WHEN jsonb_typeof(k.value) = 'null' THEN 'not_null' WHEN NOT ((jsonb_typeof(k.value) = 'string' AND (k.value #>> '{}') ~ '^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$')) THEN 'wrong_type' ELSE NULL END WHEN 'word' THEN CASE WHEN jsonb_typeof(k.value) = 'null' THEN 'not_null' WHEN NOT (jsonb_typeof(k.value) = 'string') THEN 'wrong_type' ELSE NULL END WHEN 'note' THEN CASE WHEN jsonb_typeof(k.value) = 'null' THEN NULL WHEN NOT (jsonb_typeof(k.value) = 'string') THEN 'wrong_type' ELSE NULL END WHEN 'rank' THEN CASE WHEN jsonb_typeof(k.value) = 'null' THEN NULL WHEN NOT (jsonb_typeof(k.value) = 'string') THEN 'wrong_type' ELSE NULL END WHEN 'revision' THEN CASE WHEN NOT (CASE WHEN jsonb_typeof(k.value) = 'number' THEN (k.value #>> '{}')::numeric = trunc((k.value #>> '{}')::numeric) AND (k.value #>> '{}')::numeric BETWEEN 0 AND 9223372036854775807 ELSE false END) THEN 'wrong_type' END WHEN 'last_modified' THEN NULL WHEN 'is_deleted' THEN NULL ELSE 'unknown_field' END AS reason
        FROM i CROSS JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(i.item) = 'object' THEN i.item ELSE '{}' END) AS k
      UNION ALL
      SELECT i.idx, i.item, c.name, 'required'
        FROM i CROSS JOIN unnest(ARRAY[]::text[]) AS c(name)
       WHERE jsonb_typeof(i.item) = 'object' AND NOT i.item ? c.name
      UNION ALL
      SELECT i.idx, i.item, NULL, 'not_an_object' FROM i WHERE jsonb_typeof(i.item) <> 'object'
    ) x
   WHERE x.reason IS NOT NULL
),
c AS (
  SELECT k.idx, t AS cur, jsonb_populate_record(t, CASE WHEN EXISTS (SELECT 1 FROM fe WHERE fe.idx = k.idx) OR jsonb_typeof(k.item) <> 'object'
                              THEN '{}'::jsonb ELSE k.item - ARRAY['id', 'revision', 'last_modified', 'is_deleted'] END) AS m
    FROM k JOIN "app"."terms" t ON t."id" = k.id
     FOR UPDATE OF t
),
d AS (
  SELECT k.idx, k.raw_id, k.id, k.item, k.base, k.dups, c.cur, c.m, c.idx IS NOT NULL AS found,
         array_remove(ARRAY[CASE WHEN k.item ? 'word' AND coalesce(((c.cur)."_ferry_field_revisions" ->> 'word')::bigint, 1) > k.base AND (c.m)."word" IS DISTINCT FROM (c.cur)."word" THEN 'word' END, CASE WHEN k.item ? 'note' AND coalesce(((c.cur)."_ferry_field_revisions" ->> 'note')::bigint, 1) > k.base AND (c.m)."note" IS DISTINCT FROM (c.cur)."note" THEN 'note' END, CASE WHEN k.item ? 'rank' AND coalesce(((c.cur)."_ferry_field_revisions" ->> 'rank')::bigint, 1) > k.base AND (c.m)."rank" IS DISTINCT FROM (c.cur)."rank" THEN 'rank' END]::text[], NULL) AS conflicts, array_remove(ARRAY[CASE WHEN k.item ? 'set_id' AND (c.m)."set_id" IS DISTINCT FROM (c.cur)."set_id" THEN 'set_id' END]::text[], NULL) AS ro, ((c.m)."word" IS DISTINCT FROM (c.cur)."word" OR (c.m)."note" IS DISTINCT FROM (c.cur)."note" OR (c.m)."rank" IS DISTINCT FROM (c.cur)."rank") AS changed
    FROM k LEFT JOIN c ON c.idx = k.idx
),
fk AS (SELECT NULL::int AS idx, NULL::json AS err WHERE false),
bad AS (SELECT idx, err FROM fe UNION ALL SELECT idx, err FROM fk),
st AS (
  SELECT d.*, CASE
           WHEN d.id IS NULL OR d.dups > 1 THEN 422
           WHEN NOT d.found THEN 404
           WHEN (d.cur)."is_deleted" THEN 410
           WHEN $3::bigint[] IS NOT NULL AND NOT ((d.cur)."revision" = ANY ($3::bigint[])) THEN 412
           WHEN d.base IS NULL AND $3::bigint[] IS NULL AND NOT coalesce($4::boolean, false) THEN 400
           WHEN EXISTS (SELECT 1 FROM bad WHERE bad.idx = d.idx) OR cardinality(d.ro) > 0 THEN 422
           WHEN d.base IS NULL OR d.base = (d.cur)."revision" THEN 200
           WHEN false OR d.base > (d.cur)."revision" OR cardinality(d.conflicts) > 0 THEN 409
           ELSE 200 END AS status,
         d.changed AS needs_write
    FROM d
),
u AS (UPDATE "app"."terms" AS t SET "word" = (st.m)."word", "note" = (st.m)."note", "rank" = (st.m)."rank"
  FROM st
 WHERE t."id" = st.id AND st.status = 200 AND st.needs_write
   AND NOT EXISTS (SELECT 1 FROM st s2 WHERE s2.status <> 200)
RETURNING t.*),
o AS (
  SELECT st.idx, st.raw_id,
         CASE WHEN st.status = 200 AND st.needs_write AND u."id" IS NULL
                   AND NOT EXISTS (SELECT 1 FROM st s2 WHERE s2.status <> 200) THEN 404
              ELSE st.status END AS status,
         CASE WHEN u."id" IS NOT NULL THEN json_build_object('id', u."id", 'set_id', u."set_id", 'word', u."word", 'note', u."note", 'rank', u."rank", 'revision', u."revision", 'last_modified', u."last_modified", 'is_deleted', u."is_deleted") ELSE json_build_object('id', (st.cur)."id", 'set_id', (st.cur)."set_id", 'word', (st.cur)."word", 'note', (st.cur)."note", 'rank', (st.cur)."rank", 'revision', (st.cur)."revision", 'last_modified', (st.cur)."last_modified", 'is_deleted', (st.cur)."is_deleted") END AS row,
         coalesce(u."revision", (st.cur)."revision") AS revision,
         coalesce(u."last_modified", (st.cur)."last_modified") AS last_modified
    FROM st LEFT JOIN u ON u."id" = st.id
),
errs AS (
  SELECT o.idx, 0 AS n, jsonb_build_object('index', o.idx, 'id', to_jsonb(o.raw_id), 'status', o.status,
           'code', CASE o.status WHEN 404 THEN 'not_found' WHEN 410 THEN 'gone'
                        WHEN 412 THEN 'precondition_failed' WHEN 400 THEN 'revision_required'
                        WHEN 409 THEN 'revision_conflict' ELSE 'validation_failed' END)
         || CASE WHEN o.status IN (409, 410, 412) THEN jsonb_build_object('current', CASE WHEN (st.cur)."is_deleted" THEN json_build_object('id', (st.cur)."id", 'set_id', (st.cur)."set_id", 'revision', (st.cur)."revision", 'last_modified', (st.cur)."last_modified", 'is_deleted', true) ELSE json_build_object('id', (st.cur)."id", 'set_id', (st.cur)."set_id", 'word', (st.cur)."word", 'note', (st.cur)."note", 'rank', (st.cur)."rank", 'revision', (st.cur)."revision", 'last_modified', (st.cur)."last_modified", 'is_deleted', (st.cur)."is_deleted") END)
                 ELSE '{}'::jsonb END
         || CASE WHEN o.status = 409 AND true THEN jsonb_build_object('conflicting_fields', to_jsonb(st.conflicts))
                 ELSE '{}'::jsonb END
         || CASE WHEN o.status = 422 THEN jsonb_build_object('field', 'id',
                   'reason', CASE WHEN st.id IS NULL THEN 'required' ELSE 'duplicate' END)
                 ELSE '{}'::jsonb END AS err
    FROM o JOIN st ON st.idx = o.idx
   WHERE o.status <> 200
     AND NOT (o.status = 422 AND st.id IS NOT NULL AND st.dups = 1)
  UNION ALL
  SELECT bad.idx, 1, bad.err::jsonb FROM bad JOIN st ON st.idx = bad.idx
   WHERE st.status = 422 AND st.id IS NOT NULL AND st.dups = 1
  UNION ALL
  SELECT st.idx, 2, jsonb_build_object('index', st.idx, 'id', to_jsonb(st.raw_id), 'status', 422,
           'code', 'validation_failed', 'field', f.name, 'reason', 'read_only')
    FROM st CROSS JOIN unnest(st.ro) AS f(name)
   WHERE st.status = 422 AND st.id IS NOT NULL AND st.dups = 1
)
SELECT 200,
       CASE WHEN EXISTS (SELECT 1 FROM o WHERE o.status <> 200)
            THEN ferry.fail(json_build_object('errors', (SELECT json_agg(errs.err ORDER BY errs.idx, errs.n) FROM errs)))::text
            ELSE coalesce((SELECT json_agg(o.row ORDER BY o.idx) FROM o), '[]')::text END,
       (SELECT max(o.revision) FROM o), (SELECT max(o.last_modified) FROM o), (SELECT min(o.raw_id) FROM o)
