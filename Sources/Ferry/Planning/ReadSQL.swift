/// Read statements: one row by id, and multi-show.
struct ReadSQL {
    let resource: Resource

    /// `$1` the id, `$2` the revisions `If-None-Match` names (NULL: none).
    /// One row: `(revision, last_modified, is_deleted, json)`, or none. The
    /// json is NULL when the row is live and its revision is one of `$2`: the
    /// answer is then 304, so PostgreSQL does not build a body nobody sends.
    var single: String {
        let rows = RowJSON(resource: resource)
        return """
            SELECT t."revision", t."last_modified", t."is_deleted",
                   CASE WHEN NOT t."is_deleted" AND t."revision" = ANY ($2::bigint[]) THEN NULL
                        ELSE \(rows.view(SQL.column("t")))::text END
              FROM \(resource.qualifiedName) t WHERE t."id" = $1::\(resource.idType)
            """
    }

    /// `$1` the ids as sent (text[]), `$2` the same ids parsed (NULL where
    /// malformed). One row: the body `{"data": [...], "missing": [...]}` and the
    /// collection ETag, an md5 over the requested ids and their revisions in
    /// request order, so it changes when any of them changes, appears or
    /// disappears (a row the caller cannot see counts as missing).
    var multi: String {
        let rows = RowJSON(resource: resource)
        return """
            SELECT json_build_object(
                     'data', coalesce(json_agg(\(rows.view(SQL.column("t"))) ORDER BY r.ord) FILTER (WHERE t."id" IS NOT NULL), '[]'),
                     'missing', coalesce(json_agg(r.raw ORDER BY r.ord) FILTER (WHERE t."id" IS NULL), '[]'))::text,
                   md5(string_agg(r.raw || ':' || coalesce(t."revision"::text, '-'), ',' ORDER BY r.ord))
              FROM unnest($1::text[], $2::\(resource.idType)[]) WITH ORDINALITY AS r(raw, id, ord)
              LEFT JOIN \(resource.qualifiedName) t ON t."id" = r.id
            """
    }
}
