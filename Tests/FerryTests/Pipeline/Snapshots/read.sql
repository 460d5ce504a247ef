SELECT t."revision", t."last_modified", t."is_deleted",
       CASE WHEN NOT t."is_deleted" AND t."revision" = ANY ($2::bigint[]) THEN NULL
            ELSE CASE WHEN t."is_deleted" THEN json_build_object('id', t."id", 'set_id', t."set_id", 'revision', t."revision", 'last_modified', t."last_modified", 'is_deleted', true) ELSE json_build_object('id', t."id", 'set_id', t."set_id", 'word', t."word", 'note', t."note", 'rank', t."rank", 'revision', t."revision", 'last_modified', t."last_modified", 'is_deleted', t."is_deleted") END::text END
  FROM "app"."terms" t WHERE t."id" = $1::uuid
