-- bench/feed/patch-profile.sh's POST (BENCH_WRITE=post): Ferry's create statement for app.terms
-- (Sources/Ferry/Planning/CreateSQL.swift), as a release build of 5b4447e sends it through
-- ferry.write_items for a POST of several items (copied from log_statement).
WITH i AS (
  SELECT (e.ord - 1)::int AS idx, e.item FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS e(item, ord)
),
fe AS (
  SELECT x.idx, json_build_object('index', x.idx, 'id', x.item -> 'id', 'status', 422,
           'code', CASE WHEN x.reason = 'unknown_field' THEN 'unknown_field' ELSE 'validation_failed' END,
           'field', x.field, 'reason', x.reason) AS err
    FROM (
      SELECT i.idx, i.item, k.key AS field, CASE k.key WHEN 'id' THEN CASE WHEN jsonb_typeof(k.value) = 'null' THEN 'not_null' WHEN NOT ((jsonb_typeof(k.value) = 'string' AND (k.value #>> '{}') ~ '^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$')) THEN 'wrong_type' END WHEN 'set_id' THEN CASE WHEN jsonb_typeof(k.value) = 'null' THEN 'not_null' WHEN NOT ((jsonb_typeof(k.value) = 'string' AND (k.value #>> '{}') ~ '^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$')) THEN 'wrong_type' ELSE NULL END WHEN 'word' THEN CASE WHEN jsonb_typeof(k.value) = 'null' THEN 'not_null' WHEN NOT (jsonb_typeof(k.value) = 'string') THEN 'wrong_type' ELSE NULL END WHEN 'definition' THEN CASE WHEN jsonb_typeof(k.value) = 'null' THEN 'not_null' WHEN NOT (jsonb_typeof(k.value) = 'string') THEN 'wrong_type' ELSE NULL END WHEN 'rank' THEN CASE WHEN jsonb_typeof(k.value) = 'null' THEN 'not_null' WHEN NOT (jsonb_typeof(k.value) = 'string') THEN 'wrong_type' ELSE NULL END WHEN 'revision' THEN NULL WHEN 'last_modified' THEN NULL WHEN 'is_deleted' THEN NULL ELSE 'unknown_field' END AS reason
        FROM i CROSS JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(i.item) = 'object' THEN i.item ELSE '{}' END) AS k
      UNION ALL
      SELECT i.idx, i.item, c.name, 'required'
        FROM i CROSS JOIN unnest(ARRAY['set_id']::text[]) AS c(name)
       WHERE jsonb_typeof(i.item) = 'object' AND NOT i.item ? c.name
      UNION ALL
      SELECT i.idx, i.item, NULL, 'not_an_object' FROM i WHERE jsonb_typeof(i.item) <> 'object'
    ) x
   WHERE x.reason IS NOT NULL
),
p AS (
  SELECT i.idx, i.item, jsonb_populate_record(NULL::"app"."terms",
           CASE WHEN EXISTS (SELECT 1 FROM fe WHERE fe.idx = i.idx) THEN '{}'::jsonb
                ELSE i.item - ARRAY['revision', 'last_modified', 'is_deleted'] END) AS r
    FROM i
),
v AS (SELECT p.idx, p.item, CASE WHEN p.item ? 'id' THEN (p.r)."id" ELSE gen_random_uuid() END AS "id", CASE WHEN p.item ? 'set_id' THEN (p.r)."set_id" ELSE NULL END AS "set_id", CASE WHEN p.item ? 'word' THEN (p.r)."word" ELSE ''::text END AS "word", CASE WHEN p.item ? 'definition' THEN (p.r)."definition" ELSE ''::text END AS "definition", CASE WHEN p.item ? 'rank' THEN (p.r)."rank" ELSE 'U'::text END AS "rank" FROM p),
fk AS (SELECT v.idx, json_build_object('index', v.idx, 'id', v.item -> 'id', 'status', 422,
         'code', 'validation_failed', 'field', 'set_id',
         'reason', CASE WHEN x.deleted IS NULL THEN 'not_found' ELSE 'parent_deleted' END) AS err
  FROM v LEFT JOIN LATERAL (SELECT x."is_deleted" AS deleted FROM "app"."study_sets" x WHERE x."id" = v."set_id") x ON true
 WHERE v."set_id" IS NOT NULL AND true AND (x.deleted IS NULL OR x.deleted)),
bad AS (SELECT idx, err FROM fe UNION ALL SELECT idx, err FROM fk),
s AS (
  SELECT v.idx, t AS cur, ((NOT v.item ? 'set_id' OR NOT (v."set_id" IS DISTINCT FROM t."set_id")) AND (NOT v.item ? 'word' OR NOT (v."word" IS DISTINCT FROM t."word")) AND (NOT v.item ? 'definition' OR NOT (v."definition" IS DISTINCT FROM t."definition")) AND (NOT v.item ? 'rank' OR NOT (v."rank" IS DISTINCT FROM t."rank"))) AS same
    FROM v JOIN "app"."terms" t ON t."id" = v."id"
),
ins AS (
  INSERT INTO "app"."terms" AS t ("id", "set_id", "word", "definition", "rank")
  SELECT v."id", v."set_id", v."word", v."definition", v."rank" FROM v
   WHERE NOT EXISTS (SELECT 1 FROM bad) AND NOT EXISTS (SELECT 1 FROM s WHERE s.idx = v.idx)
   ORDER BY v.idx
  ON CONFLICT ("id") DO NOTHING
  RETURNING t.*
),
o AS (
  SELECT v.idx, v."id",
         CASE WHEN ins."id" IS NOT NULL THEN 201
              WHEN s.idx IS NULL THEN 409
              WHEN (s.cur)."is_deleted" THEN 410
              WHEN s.same THEN 200
              ELSE 409 END AS status,
         CASE WHEN ins."id" IS NOT NULL THEN json_build_object('id', ins."id", 'set_id', ins."set_id", 'word', ins."word", 'definition', ins."definition", 'rank', ins."rank", 'revision', ins."revision", 'last_modified', ins."last_modified", 'is_deleted', ins."is_deleted")
              WHEN s.idx IS NOT NULL THEN CASE WHEN (s.cur)."is_deleted" THEN json_build_object('id', (s.cur)."id", 'set_id', (s.cur)."set_id", 'revision', (s.cur)."revision", 'last_modified', (s.cur)."last_modified", 'is_deleted', true) ELSE json_build_object('id', (s.cur)."id", 'set_id', (s.cur)."set_id", 'word', (s.cur)."word", 'definition', (s.cur)."definition", 'rank', (s.cur)."rank", 'revision', (s.cur)."revision", 'last_modified', (s.cur)."last_modified", 'is_deleted', (s.cur)."is_deleted") END END AS row,
         coalesce(ins."revision", (s.cur)."revision") AS revision,
         coalesce(ins."last_modified", (s.cur)."last_modified") AS last_modified
    FROM v LEFT JOIN ins ON ins."id" = v."id" LEFT JOIN s ON s.idx = v.idx
)
SELECT (SELECT CASE WHEN bool_and(o.status = 200) THEN 200 ELSE 201 END FROM o) AS status,
       CASE WHEN EXISTS (SELECT 1 FROM bad)
            THEN ferry.fail(json_build_object('errors', (SELECT json_agg(bad.err ORDER BY bad.idx) FROM bad)))::text
            WHEN EXISTS (SELECT 1 FROM o WHERE o.status NOT IN (200, 201))
            THEN ferry.fail(json_build_object('errors', (
                   SELECT json_agg(jsonb_build_object('index', o.idx, 'id', o."id", 'status', o.status,
                            'code', CASE o.status WHEN 410 THEN 'gone' ELSE 'already_exists' END)
                            || CASE WHEN o.row IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('current', o.row) END
                            ORDER BY o.idx)
                     FROM o WHERE o.status NOT IN (200, 201))))::text
            ELSE (SELECT json_agg(o.row ORDER BY o.idx) FROM o)::text END AS body,
       (SELECT max(o.revision) FROM o) AS revision, (SELECT max(o.last_modified) FROM o) AS last_modified,
       (SELECT min(o."id"::text) FROM o) AS id
