import FerryHTTP

extension OpenAPIDocument {
    /// Every error code of the contract, for the Problem schema's `code`.
    public static let problemCodes: [String] = [
        "bad_request", "invalid_json", "invalid_query", "revision_required", "unauthorized", "not_found",
        "paging_token_not_found", "method_not_allowed", "revision_conflict", "already_exists",
        "idempotency_key_in_use", "gone", "paging_token_expired", "cursor_expired", "precondition_failed",
        "payload_too_large", "uri_too_long", "request_header_fields_too_large", "unsupported_media_type",
        "unsupported_content_encoding",
        "validation_failed", "unknown_field", "too_many_items", "idempotency_key_reused", "rate_limited",
        "unavailable", "storage_full", "paging_unavailable", "internal_error",
    ]

    static func object(_ properties: [(String, JSONValue)], required: [String] = []) -> JSONValue {
        var members: [(String, JSONValue)] = [("type", "object"), ("properties", .object(properties))]
        if !required.isEmpty { members.append(("required", .array(required.map { .string($0) }))) }
        return .object(members)
    }

    static func type(_ name: String, _ extra: (String, JSONValue)...) -> JSONValue {
        .object([("type", .string(name))] + extra)
    }

    static let sharedSchemas: [(String, JSONValue)] = [
        ("Problem", object([
            ("type", type("string")), ("title", type("string")), ("status", type("integer")),
            ("code", type("string", ("enum", .array(problemCodes.map { .string($0) })))),
            ("detail", type("string")),
            ("current", .object([("description", "The server's version of the row (409, 412).")])),
            ("conflicting_fields", type("array", ("items", type("string")))),
            ("errors", type("array", ("items", type("object")), ("description", "One entry per failing field or item."))),
            ("operation_index", type("integer", ("description", "The failing batch operation."))),
        ], required: ["type", "title", "status", "code"])),
        ("Tombstone", object([
            ("id", .object([])), ("revision", type("integer")), ("last_modified", type("integer", ("format", "int64"))),
            ("is_deleted", type("boolean", ("const", true))),
        ], required: ["id", "is_deleted"])),
        ("Revoked", object([
            ("id", .object([])), ("is_deleted", type("boolean", ("const", true))), ("revoked", type("boolean", ("const", true))),
        ], required: ["id", "is_deleted", "revoked"])),
        ("IdRevision", object([("id", .object([])), ("revision", type("integer"))], required: ["id", "revision"])),
        ("Paging", object([
            ("token", .object([("type", ["string", "null"]), ("description", "null when the result fits in one page.")])),
            ("page", type("integer")), ("pages", type("integer")), ("total", type("integer")),
            ("next", .object([("type", ["string", "null"]), ("description", "The next page's URL, or null on the last page.")])),
        ])),
        ("Changes", object([
            ("changes", type("array", ("items", object([
                ("resource", type("string")),
                ("data", .object([("description", "The row, a tombstone, or a revocation ({id, is_deleted, revoked}).")])),
            ], required: ["resource", "data"])))),
            ("cursor", type("string")), ("has_more", type("boolean")),
        ], required: ["changes", "cursor", "has_more"])),
        ("BatchRequest", object([
            ("operations", type("array", ("items", object([
                ("method", type("string", ("enum", ["GET", "POST", "PUT", "PATCH", "DELETE"]))),
                ("path", type("string")),
                ("headers", type("object", ("additionalProperties", type("string")))),
                ("body", .object([])),
            ], required: ["method", "path"])))),
        ], required: ["operations"])),
        ("BatchResponse", object([
            ("results", type("array", ("items", object([
                ("status", type("integer")), ("headers", type("object", ("additionalProperties", type("string")))),
                ("body", .object([])),
            ], required: ["status"])))),
        ], required: ["results"])),
        ("Token", object([
            ("token", type("string")), ("expires_at", type("integer", ("format", "int64"))), ("user_id", type("string")),
        ], required: ["token", "expires_at", "user_id"])),
        ("User", object([("id", type("string")), ("name", type("string")), ("created_at", .object([]))], required: ["id", "name"])),
        ("SignUp", object([("name", type("string")), ("password", type("string"))], required: ["name", "password"])),
        ("Catalog", object([
            ("resources", type("array", ("items", object([
                ("name", type("string")), ("path", type("string")), ("join_table", type("boolean")),
                ("ranked", type("boolean")), ("columns", type("array", ("items", type("object")))),
            ])))),
        ], required: ["resources"])),
    ]

    static let sharedHeaders: [(String, JSONValue)] = [
        ("ETag", .object([("description", "The revision, quoted; for lists a digest of every row."), ("schema", type("string"))])),
        ("Link", .object([("description", "`<next>; rel=\"next\"` while there are more pages."), ("schema", type("string"))])),
        ("Location", .object([("description", "The created row's URL."), ("schema", type("string"))])),
        ("Retry-After", .object([("description", "Seconds to wait before retrying."), ("schema", type("integer"))])),
        ("Idempotent-Replayed", .object([("description", "true on a stored response replayed for an Idempotency-Key."),
                                         ("schema", type("string"))])),
    ]

    static func sharedParameters(_ configuration: FerryConfiguration) -> [(String, JSONValue)] {
        func param(_ name: String, _ location: String, _ schema: JSONValue, _ description: String) -> JSONValue {
            .object([("name", .string(name)), ("in", .string(location)), ("schema", schema), ("description", .string(description))])
        }
        let paging = configuration.paging
        return [
            ("IfMatch", param("If-Match", "header", type("string"), "\"<revision>\": the strict precondition for writes.")),
            ("IfNoneMatch", param("If-None-Match", "header", type("string"), "Answers 304 when the ETag still matches (`*` allowed).")),
            ("IfModifiedSince", param("If-Modified-Since", "header", type("string"), "Answers 304 when unchanged since (HTTP date).")),
            ("IdempotencyKey", param("Idempotency-Key", "header", type("string"),
                                     "Retries with the same key and request get the stored response.")),
            ("modified_since", param("modified_since", "query", type("integer", ("format", "int64")),
                                     "Only rows changed after this ms timestamp, tombstones included.")),
            ("include_deleted", param("include_deleted", "query", type("boolean"), "Adds tombstones.")),
            ("order", param("order", "query", type("string"), "`column[.asc|.desc],...`; ties break on id.")),
            ("limit", param("limit", "query", type("integer", ("minimum", 1), ("maximum", .int(paging.maxLimit)),
                                                   ("default", .int(paging.defaultLimit))), "Page size.")),
            ("paging_token", param("paging_token", "query", type("string"), "A snapshot token from a first page.")),
            ("page", param("page", "query", type("integer", ("minimum", 1)), "The page of the snapshot to read.")),
        ]
    }
}
