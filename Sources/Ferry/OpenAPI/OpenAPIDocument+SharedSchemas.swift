import FerryHTTP

extension OpenAPIDocument {
    /// Every error code of the contract but sign-in's with JWTs (``jwtProblemCodes``, listed only
    /// where providers are configured), for the Problem schema's `code`.
    public static let problemCodes: [String] = ProblemCode.allCases.map(\.rawValue).filter { !jwtProblemCodes.contains($0) }

    static func object(_ properties: [(String, JSONValue)], required: [String] = []) -> JSONValue {
        var members: [(String, JSONValue)] = [("type", "object"), ("properties", .object(properties))]
        if !required.isEmpty { members.append(("required", .array(required.map { .string($0) }))) }
        return .object(members)
    }

    /// The members of an object schema (empty for anything else).
    static func members(_ schema: JSONValue) -> [(String, JSONValue)] {
        if case .object(let members) = schema { return members }
        return []
    }

    static func type(_ name: String, _ extra: (String, JSONValue)...) -> JSONValue {
        .object([("type", .string(name))] + extra)
    }

    /// The codes of JWT refusals and of a provider's keys out of reach, in the
    /// Problem schema when JWTs are accepted.
    static let jwtProblemCodes = JWTRefusal.codes + [ProblemCode.jwksUnavailable.rawValue]

    /// The schemas every document has; `jwt` adds JWT refusal codes and users without a name.
    static func sharedSchemas(jwt: Bool) -> [(String, JSONValue)] {
        [
            (
                "Problem",
                object(
                    [
                        ("type", type("string")), ("title", type("string")), ("status", type("integer")),
                        ("code", type("string", ("enum", .array((problemCodes + (jwt ? jwtProblemCodes : [])).map { .string($0) })))),
                        ("detail", type("string")),
                        ("current", .object([("description", "The server's version of the row (409, 412).")])),
                        ("conflicting_fields", type("array", ("items", type("string")))),
                        ("errors", type("array", ("items", type("object")), ("description", "One entry per failing field or item."))),
                        ("operation_index", type("integer", ("description", "The failing batch operation."))),
                    ], required: ["type", "title", "status", "code"])
            ),
            (
                "Tombstone",
                object(
                    [
                        (
                            "id",
                            .object([
                                ("type", ["string", "integer"]),
                                ("description", "The row's key, as the table types it: a string (uuid, text) or an integer."),
                            ])
                        ), ("revision", type("integer")), ("last_modified", type("integer", ("format", "int64"))),
                        ("is_deleted", type("boolean", ("const", true))),
                    ], required: ["id", "is_deleted"])
            ),
            (
                "Gone",
                .object([
                    ("description", "410 `gone` on a row: the problem, the tombstone's fields beside it, and the tombstone as `current`."),
                    (
                        "allOf",
                        [
                            ref("schemas", "Problem"), ref("schemas", "Tombstone"),
                            object([("current", ref("schemas", "Tombstone"))], required: ["current"]),
                        ]
                    ),
                ])
            ),
            (
                "Revoked",
                object(
                    [
                        (
                            "id",
                            .object([
                                ("type", ["string", "integer"]),
                                ("description", "The row's key, as the table types it: a string (uuid, text) or an integer."),
                            ])
                        ), ("is_deleted", type("boolean", ("const", true))), ("revoked", type("boolean", ("const", true))),
                    ], required: ["id", "is_deleted", "revoked"])
            ),
            (
                "Paging",
                object([
                    ("token", .object([("type", ["string", "null"]), ("description", "null when the result fits in one page.")])),
                    ("page", type("integer")), ("pages", type("integer")), ("total", type("integer")),
                    ("next", .object([("type", ["string", "null"]), ("description", "The next page's URL, or null on the last page.")])),
                ])
            ),
            (
                "Changes",
                object(
                    [
                        (
                            "changes",
                            type(
                                "array",
                                (
                                    "items",
                                    object(
                                        [
                                            ("resource", type("string")),
                                            (
                                                "data",
                                                .object([("description", "The row, a tombstone, or a revocation ({id, is_deleted, revoked}).")])
                                            ),
                                        ], required: ["resource", "data"])
                                ))
                        ),
                        ("cursor", type("string")), ("has_more", type("boolean")),
                    ], required: ["changes", "cursor", "has_more"])
            ),
            (
                "BatchResponse",
                object(
                    [
                        (
                            "results",
                            type(
                                "array",
                                (
                                    "items",
                                    object(
                                        [
                                            ("status", type("integer")), ("headers", type("object", ("additionalProperties", type("string")))),
                                            ("body", .object([])),
                                        ], required: ["status"])
                                ))
                        )
                    ], required: ["results"])
            ),
            (
                "Token",
                object(
                    [
                        ("token", type("string")), ("expires_at", type("integer", ("format", "int64"))), ("user_id", type("string")),
                    ], required: ["token", "expires_at", "user_id"])
            ),
            jwt
                ? (
                    "User",
                    object(
                        [
                            ("id", type("string")),
                            ("name", .object([("type", ["string", "null"]), ("description", "null for a user from a JWT.")])),
                            ("created_at", .object([])),
                        ], required: ["id", "name"])
                )
                : ("User", object([("id", type("string")), ("name", type("string")), ("created_at", .object([]))], required: ["id", "name"])),
            ("FoundUser", object([("id", type("string")), ("name", type("string"))], required: ["id", "name"])),
            ("SignUp", object([("name", type("string")), ("password", type("string"))], required: ["name", "password"])),
            (
                "Catalog",
                object(
                    [
                        (
                            "resources",
                            type(
                                "array",
                                (
                                    "items",
                                    object([
                                        ("name", type("string")), ("path", type("string")), ("join_table", type("boolean")),
                                        ("ranked", type("boolean")), ("columns", type("array", ("items", type("object")))),
                                        (
                                            "public",
                                            .object([
                                                ("type", ["object", "null"]),
                                                (
                                                    "description",
                                                    "Rows readable by every signed-in user (ferry.sync_public): those whose row of `resource` has `flag` true; null when none."
                                                ),
                                            ])
                                        ),
                                    ])
                                ))
                        ),
                        (
                            "streams",
                            type(
                                "array",
                                (
                                    "items",
                                    object(
                                        [
                                            ("name", type("string")), ("root", type("string")), ("path", type("string")),
                                            ("resources", type("array", ("items", type("string")))),
                                        ], required: ["name", "root", "resources"])
                                ))
                        ),
                        (
                            "live",
                            object(
                                [
                                    (
                                        "max_wait_streams",
                                        .object([
                                            ("type", "integer"), ("minimum", 1),
                                            (
                                                "description",
                                                "live.max_wait_streams: the most streams one POST /v1/changes/wait may name (400 beyond); a client with more splits them into several waits."
                                            ),
                                        ])
                                    )
                                ], required: ["max_wait_streams"])
                        ),
                    ], required: ["resources", "streams", "live"])
            ),
        ]
    }

    static let sharedHeaders: [(String, JSONValue)] = [
        ("ETag", .object([("description", "The revision, quoted; for lists a digest of every row."), ("schema", type("string"))])),
        ("Link", .object([("description", "`<next>; rel=\"next\"` while there are more pages."), ("schema", type("string"))])),
        ("Location", .object([("description", "The created row's URL."), ("schema", type("string"))])),
        ("Retry-After", .object([("description", "Seconds to wait before retrying."), ("schema", type("integer"))])),
        (
            "Cache-Control",
            .object([
                (
                    "description",
                    "`public, max-age=N` on a public stream's page, the same for every signed-in reader (a shared cache may keep it N seconds); `private, no-store` on every other page."
                ),
                ("schema", type("string")),
            ])
        ),
        (
            "Idempotent-Replayed",
            .object([
                ("description", "true on a stored response replayed for an Idempotency-Key."),
                ("schema", type("string")),
            ])
        ),
    ]

    /// 1 to 255 visible ASCII characters (RFC 5234 VCHAR), as the server checks them.
    static let idempotencyKeySchema = type("string", ("minLength", 1), ("maxLength", 255), ("pattern", "^[!-~]+$"))

    /// A non-negative Int64: a time in ms since the epoch, or a revision (the server refuses others with 400).
    static let milliseconds = type("integer", ("format", "int64"), ("minimum", 0), ("maximum", .int(Int(Int64.max))))

    static func sharedParameters(_ configuration: FerryConfiguration) -> [(String, JSONValue)] {
        func param(_ name: String, _ location: String, _ schema: JSONValue, _ description: String) -> JSONValue {
            .object([("name", .string(name)), ("in", .string(location)), ("schema", schema), ("description", .string(description))])
        }
        let paging = configuration.paging
        return [
            ("IfMatch", param("If-Match", "header", type("string"), "\"<revision>\": the strict precondition for writes.")),
            ("IfNoneMatch", param("If-None-Match", "header", type("string"), "Answers 304 when the ETag still matches (`*` allowed).")),
            ("IfModifiedSince", param("If-Modified-Since", "header", type("string"), "Answers 304 when unchanged since (HTTP date).")),
            (
                "IdempotencyKey",
                param(
                    "Idempotency-Key", "header", idempotencyKeySchema,
                    "Retries with the same key and request get the stored response.")
            ),
            (
                "modified_since",
                param(
                    "modified_since", "query", milliseconds,
                    "Only rows changed after this ms timestamp, tombstones included.")
            ),
            ("include_deleted", param("include_deleted", "query", type("boolean"), "Adds tombstones.")),
            (
                "public",
                param(
                    "public", "query", type("boolean"),
                    "false: only rows the caller reads privately (owner, member), without public rows (core 0025).")
            ),
            (
                "limit",
                param(
                    "limit", "query",
                    type(
                        "integer", ("minimum", 1), ("maximum", .int(paging.maxLimit)),
                        ("default", .int(paging.defaultLimit))), "Page size.")
            ),
            // One exploded object, so that the description can say what the server checks: `page`
            // only with a `paging_token` (400 otherwise), which two separate parameters cannot.
            (
                "paging",
                .object([
                    ("name", "paging"), ("in", "query"), ("style", "form"), ("explode", true),
                    (
                        "schema",
                        .object([
                            ("type", "object"),
                            (
                                "properties",
                                .object([
                                    ("paging_token", type("string", ("description", "A snapshot token from a first page's answer."))),
                                    (
                                        "page",
                                        type(
                                            "integer", ("minimum", 1), ("maximum", .int(PagingRequest.maxPage)),
                                            ("description", "The page of the snapshot to read; 1 without it."))
                                    ),
                                ])
                            ),
                            ("dependentRequired", .object([("page", ["paging_token"])])),
                            ("additionalProperties", false),
                        ])
                    ),
                    ("description", "`paging_token=<token>&page=<n>`: a page of the snapshot a first page made."),
                ])
            ),
        ]
    }
}
