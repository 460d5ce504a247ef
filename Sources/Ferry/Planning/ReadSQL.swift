/// Read statements: one row by id, and multi-show.
struct ReadSQL {
    let resource: Resource

    /// Parameters: ``Single``'s. One row: `(revision, last_modified,
    /// is_deleted, json)`, or none. The json is NULL when the row is live and
    /// its revision is one of those `If-None-Match` names: the answer is then
    /// 304, so PostgreSQL does not build a body nobody sends.
    var single: String {
        let rows = RowJSON(resource: resource)
        let parameters = Single.placeholders
        return """
            SELECT t."revision", t."last_modified", t."is_deleted",
                   CASE WHEN NOT t."is_deleted" AND t."revision" = ANY (\(parameters.revisions)::bigint[]) THEN NULL
                        ELSE \(rows.view(SQL.column("t")))::text END AS json
              FROM \(resource.qualifiedName) t WHERE t."id" = \(parameters.id)::\(resource.idType)
            """
    }

    /// Parameters: ``Many``'s. One row: `body`, `{"data": [...], "missing":
    /// [...]}`, and `fingerprint`, the collection ETag: an md5 over the
    /// requested ids and their revisions in request order, so it changes when
    /// any of them changes, appears or disappears (a row the caller cannot see
    /// counts as missing).
    var multi: String {
        let rows = RowJSON(resource: resource)
        let parameters = Many.placeholders
        return """
            SELECT json_build_object(
                     'data', coalesce(json_agg(\(rows.view(SQL.column("t"))) ORDER BY r.ord) FILTER (WHERE t."id" IS NOT NULL), '[]'),
                     'missing', coalesce(json_agg(r.raw ORDER BY r.ord) FILTER (WHERE t."id" IS NULL), '[]'))::text AS body,
                   md5(string_agg(r.raw || ':' || coalesce(t."revision"::text, '-'), ',' ORDER BY r.ord)) AS fingerprint
              FROM unnest(\(parameters.ids)::text[], \(parameters.parsed)::\(resource.idType)[]) WITH ORDINALITY AS r(raw, id, ord)
              LEFT JOIN \(resource.qualifiedName) t ON t."id" = r.id
            """
    }
}

extension ReadSQL {
    /// A read by id's parameters, bound in one order for the cached text
    /// (``placeholders``) and for each request.
    struct Single: Sendable {
        /// The id.
        let id: SQLParameter
        /// The revisions `If-None-Match` names (`bigint[]`; NULL: none).
        let revisions: SQLParameter
        /// The values, in parameter order.
        let binds: [Bind]

        init(id: String, revisions: [Revision]?) {
            var binds = SQLBinds(reservingCapacity: 2)
            self.id = binds.bind(.text(id))
            self.revisions = binds.bind(.revisions(revisions))
            self.binds = binds.values
        }

        static let placeholders = Single(id: "", revisions: nil)
    }

    /// A multi-show's parameters, bound like ``Single``'s.
    struct Many: Sendable {
        /// The ids as sent (`text[]`).
        let ids: SQLParameter
        /// The same ids parsed, NULL where malformed.
        let parsed: SQLParameter
        /// The values, in parameter order.
        let binds: [Bind]

        init(ids: [String], parsed: [String?]) {
            var binds = SQLBinds(reservingCapacity: 2)
            self.ids = binds.bind(.texts(ids))
            self.parsed = binds.bind(.texts(parsed))
            self.binds = binds.values
        }

        static let placeholders = Many(ids: [], parsed: [])
    }
}
