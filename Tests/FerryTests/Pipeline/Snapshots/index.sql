WITH m AS (
  SELECT t.*, count(*) OVER () AS "_ferry_total",
         sum(hashtextextended(t."id"::text || ':' || t."revision"::text, 0)) OVER () AS "_ferry_hash"
    FROM "app"."counters" t
   WHERE t."hits" = ANY ($1::integer[]) AND NOT t."is_deleted"
   ORDER BY t."hits" DESC, t."id" ASC
   LIMIT $2::int
)
SELECT coalesce(json_agg(CASE WHEN m."is_deleted" THEN json_build_object('id', m."id", 'revision', m."revision", 'last_modified', m."last_modified", 'is_deleted', true) ELSE json_build_object('id', m."id", 'hits', m."hits", 'revision', m."revision", 'last_modified', m."last_modified", 'is_deleted', m."is_deleted") END ORDER BY m."hits" DESC, m."id" ASC), '[]')::text,
       coalesce(max(m."_ferry_total"), 0), coalesce(max(m."_ferry_hash"), 0)::text
  FROM m
