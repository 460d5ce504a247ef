t."set_id" = ANY ($1::uuid[]) AND t."last_modified" > $2::bigint
-- 
t."rank" ASC, t."id" ASC
-- 
CASE WHEN t."is_deleted" THEN json_build_object('id', t."id", 'set_id', t."set_id", 'revision', t."revision", 'last_modified', t."last_modified", 'is_deleted', true) ELSE json_build_object('id', t."id", 'set_id', t."set_id", 'word', t."word", 'note', t."note", 'rank', t."rank", 'revision', t."revision", 'last_modified', t."last_modified", 'is_deleted', t."is_deleted") END
-- 
t."revision"
