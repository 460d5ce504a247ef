SELECT json_build_object(
         'data', coalesce(json_agg(CASE WHEN t."is_deleted" THEN json_build_object('id', t."id", 'set_id', t."set_id", 'revision', t."revision", 'last_modified', t."last_modified", 'is_deleted', true) ELSE json_build_object('id', t."id", 'set_id', t."set_id", 'word', t."word", 'note', t."note", 'rank', t."rank", 'revision', t."revision", 'last_modified', t."last_modified", 'is_deleted', t."is_deleted") END ORDER BY r.ord) FILTER (WHERE t."id" IS NOT NULL), '[]'),
         'missing', coalesce(json_agg(r.raw ORDER BY r.ord) FILTER (WHERE t."id" IS NULL), '[]'))::text,
       md5(string_agg(r.raw || ':' || coalesce(t."revision"::text, '-'), ',' ORDER BY r.ord))
  FROM unnest($1::text[], $2::uuid[]) WITH ORDINALITY AS r(raw, id, ord)
  LEFT JOIN "app"."terms" t ON t."id" = r.id
