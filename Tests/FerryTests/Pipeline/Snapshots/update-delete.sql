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
fe AS (SELECT NULL::int AS idx, NULL::json AS err WHERE false),
c AS (
  SELECT k.idx, t AS cur, t AS m
    FROM k JOIN "app"."terms" t ON t."id" = k.id
     FOR UPDATE OF t
),
d AS (
  SELECT k.idx, k.raw_id, k.id, k.item, k.base, k.dups, c.cur, c.m, c.idx IS NOT NULL AS found,
         ARRAY[]::text[] AS conflicts, ARRAY[]::text[] AS ro, false AS changed
    FROM k LEFT JOIN c ON c.idx = k.idx
),
fk AS (SELECT NULL::int AS idx, NULL::json AS err WHERE false),
bad AS (SELECT idx, err FROM fe UNION ALL SELECT idx, err FROM fk),
st AS (
  SELECT d.*, CASE
           WHEN d.id IS NULL OR d.dups > 1 THEN 422
           WHEN NOT d.found THEN 404
           WHEN (d.cur)."is_deleted" THEN 200
           WHEN $3::bigint[] IS NOT NULL AND NOT ((d.cur)."revision" = ANY ($3::bigint[])) THEN 412
           WHEN d.base IS NULL AND $3::bigint[] IS NULL AND NOT coalesce($4::boolean, false) THEN 400
           WHEN EXISTS (SELECT 1 FROM bad WHERE bad.idx = d.idx) OR cardinality(d.ro) > 0 THEN 422
           WHEN d.base IS NULL OR d.base = (d.cur)."revision" THEN 200
           WHEN true OR d.base > (d.cur)."revision" OR cardinality(d.conflicts) > 0 THEN 409
           ELSE 200 END AS status,
         NOT coalesce((d.cur)."is_deleted", true) AS needs_write
    FROM d
),
u AS (UPDATE "app"."terms" AS t SET "is_deleted" = true
  FROM st
 WHERE t."id" = st.id AND st.status = 200 AND st.needs_write
   AND NOT EXISTS (SELECT 1 FROM st s2 WHERE s2.status <> 200)
RETURNING t.*),
o AS (
  SELECT st.idx, st.raw_id,
         CASE WHEN st.status = 200 AND st.needs_write AND u."id" IS NULL
                   AND NOT EXISTS (SELECT 1 FROM st s2 WHERE s2.status <> 200) THEN 404
              ELSE st.status END AS status,
         CASE WHEN u."id" IS NOT NULL THEN json_build_object('id', u."id", 'set_id', u."set_id", 'revision', u."revision", 'last_modified', u."last_modified", 'is_deleted', true) ELSE json_build_object('id', (st.cur)."id", 'set_id', (st.cur)."set_id", 'revision', (st.cur)."revision", 'last_modified', (st.cur)."last_modified", 'is_deleted', true) END AS row,
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
         || CASE WHEN o.status = 409 AND false THEN jsonb_build_object('conflicting_fields', to_jsonb(st.conflicts))
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
