import FerryHTTP

extension OpenAPIDocument {
    /// Query names Index itself uses; a column with one of these names cannot be an equality filter.
    static var reservedQueryNames: Set<String> { IndexQuery.reserved }

    /// `/v1/<r>` and `/v1/<r>/{id}` with the five actions and their bulk forms.
    func resourcePaths(_ resource: Resource) -> [(String, JSONValue)] {
        let name = Self.componentName(resource.name)
        let schema = { (suffix: String) in Self.ref("schemas", suffix.isEmpty ? name : "\(name).\(suffix)") }
        let rows = Self.type("array", ("items", schema("")))
        let tag = resource.name
        let maxItems = configuration.limits.maxBulkItems
        let idempotency = Self.ref("parameters", "IdempotencyKey")
        let writeProblems: [(String, JSONValue)] =
            commonProblems + Self.bodyProblems + [
                ("404", Self.problem(["not_found"])),
                ("409", Self.problem(["revision_conflict", "idempotency_key_in_use"])),
                ("410", Self.problem(["gone"])),
                ("422", Self.problem(["validation_failed", "unknown_field", "too_many_items", "idempotency_key_reused"])),
            ]
        // An update or delete of a row the caller reads but may not write.
        let forbidden = ("403", Self.problem(["forbidden"]))
        let filters = resource.columns.filter { !Self.reservedQueryNames.contains($0.name) }.map { column in
            JSONValue.object([
                ("name", .string(column.name)), ("in", "query"), ("schema", Self.filterSchema(column)),
                (
                    "description",
                    .string(
                        "Equality on \(column.name); a comma-separated list means IN. A value in double quotes may hold commas "
                            + #"(`"Smith, John"`); inside them `\"` is a quote and `\\` a backslash."#)
                ),
            ])
        }
        // A resource whose is_deleted the serve role may not update has no DELETE (405).
        let collection = JSONValue.object(
            [
                (
                    "get",
                    Self.operation(
                        "index_\(name)", "List \(resource.name), filtered, ordered and paged", tag: tag,
                        parameters: ["modified_since", "include_deleted", "public"].map { Self.ref("parameters", $0) } + [
                            Self.query("order", Self.orderSchema(resource), "`column[.asc|.desc],...`; ties break on id.")
                        ] + ["limit", "paging", "IfNoneMatch"].map { Self.ref("parameters", $0) } + filters,
                        responses: commonProblems.filter { $0.0 != "503" } + [
                            ("200", Self.ok("A page of rows.", schema("index"), headers: ["ETag", "Link"])),
                            ("304", Self.ok("Nothing changed since the ETag sent.", headers: ["ETag"])),
                            ("400", Self.problem(["invalid_query", "bad_request"])),
                            ("404", Self.problem(["paging_token_not_found"])),
                            ("410", Self.problem(["paging_token_expired"])),
                            ("503", Self.problem(["unavailable", "storage_full", "paging_unavailable"], headers: ["Retry-After"])),
                        ])
                ),
                (
                    "post",
                    Self.operation(
                        "create_\(name)", "Create one \(resource.name) row, or up to \(maxItems) at once", tag: tag,
                        parameters: [idempotency],
                        body: Self.jsonBody(
                            .object([
                                (
                                    "oneOf",
                                    .array([
                                        schema("create"), Self.type("array", ("items", schema("create")), ("maxItems", .int(maxItems))),
                                    ])
                                )
                            ])),
                        responses: writeProblems.filter { $0.0 != "409" } + [
                            (
                                "201",
                                Self.linked(
                                    Self.ok(
                                        "Created: the row (with Location and ETag), or the rows in request order.",
                                        .object([("oneOf", .array([schema(""), rows]))]), headers: ["Location", "ETag"]),
                                    Self.createdLinks(name, deletable: resource.deletable))
                            ),
                            (
                                "200",
                                Self.ok(
                                    "A retried create whose fields all match the stored row.",
                                    .object([("oneOf", .array([schema(""), rows]))]))
                            ),
                            ("409", Self.problem(["already_exists", "idempotency_key_in_use"])),
                        ])
                ),
                (
                    "patch",
                    Self.operation(
                        "bulkUpdate_\(name)", "Update many rows in one transaction", tag: tag,
                        parameters: [idempotency],
                        body: Self.jsonBody(Self.type("array", ("items", schema("bulkItem")), ("maxItems", .int(maxItems)))),
                        responses: writeProblems + [forbidden, ("200", Self.ok("The updated rows.", rows))])
                ),
            ]
                + (resource.deletable
                    ? [
                        (
                            "delete",
                            Self.operation(
                                "bulkDelete_\(name)", "Soft-delete many rows in one transaction", tag: tag,
                                parameters: [idempotency],
                                body: Self.jsonBody(Self.type("array", ("items", schema("idRevision")), ("maxItems", .int(maxItems)))),
                                responses: writeProblems + [
                                    forbidden,
                                    ("200", Self.ok("The tombstones.", Self.type("array", ("items", Self.ref("schemas", "Tombstone"))))),
                                ])
                        )
                    ] : []))
        // The path's name percent-encoded, as GET /v1 gives it: a table may be named `"Odd Things"`.
        let path = "/v1/" + PercentEncoding.encoded(resource.name)
        return [(path, collection), (path + "/{id}", member(resource, tag: tag, schema: schema))]
    }

    /// What a client does next with a row it created: read it, update it
    /// under its ETag, delete it at its revision. Stateful testers follow these.
    static func createdLinks(_ name: String, deletable: Bool) -> [(String, JSONValue)] {
        let id = ("id", JSONValue.string("$response.body#/id"))
        return [
            ("read", .object([("operationId", .string("read_\(name)")), ("parameters", .object([id]))])),
            (
                "update",
                .object([
                    ("operationId", .string("update_\(name)")),
                    ("parameters", .object([id, ("header.If-Match", "$response.header.ETag")])),
                ])
            ),
            (
                "replace",
                .object([
                    ("operationId", .string("replace_\(name)")),
                    ("parameters", .object([id, ("header.If-Match", "$response.header.ETag")])),
                ])
            ),
        ]
            + (deletable
                ? [
                    (
                        "delete",
                        .object([
                            ("operationId", .string("delete_\(name)")),
                            ("parameters", .object([id, ("query.revision", "$response.body#/revision")])),
                        ])
                    )
                ] : [])
    }

    /// `response` with OpenAPI links.
    static func linked(_ response: JSONValue, _ links: [(String, JSONValue)]) -> JSONValue {
        guard case .object(let members) = response else { return response }
        return .object(members + [("links", .object(links))])
    }

    private func member(_ resource: Resource, tag: String, schema: (String) -> JSONValue) -> JSONValue {
        let name = Self.componentName(resource.name)
        let ifMatch = Self.ref("parameters", "IfMatch")
        let idempotency = Self.ref("parameters", "IdempotencyKey")
        let gone = Self.problem(["gone"], headers: ["ETag"], schema: Self.ref("schemas", "Gone"))
        let updateProblems: [(String, JSONValue)] =
            commonProblems + Self.bodyProblems.filter { $0.0 != "400" } + [
                ("400", Self.problem(["bad_request", "invalid_json", "revision_required"])),
                ("403", Self.problem(["forbidden"])),
                ("404", Self.problem(["not_found"])),
                ("409", Self.problem(["revision_conflict", "idempotency_key_in_use"])),
                ("410", gone),
                ("412", Self.problem(["precondition_failed"])),
                ("422", Self.problem(["validation_failed", "unknown_field", "idempotency_key_reused"])),
                ("200", Self.ok("The updated row.", schema(""), headers: ["ETag"])),
            ]
        let readResponses: [(String, JSONValue)] =
            commonProblems + [
                (
                    "200",
                    Self.ok(
                        "The row (one id), or the rows in request order with the ids not found (a comma-separated list).",
                        .object([("oneOf", .array([schema(""), schema("multiShow")]))]), headers: ["ETag"])
                ),
                ("304", Self.ok("Not modified.", headers: ["ETag"])),
                ("400", Self.problem(["bad_request"])),
                ("404", Self.problem(["not_found"])),
                ("410", gone),
            ]
        return .object(
            [
                (
                    "parameters",
                    .array([
                        .object([
                            ("name", "id"), ("in", "path"), ("required", true), ("schema", Self.pathIDSchema),
                            ("description", "A row id, or a comma-separated list of ids (multi-show)."),
                        ])
                    ])
                ),
                (
                    "get",
                    Self.operation(
                        "read_\(name)", "Read one \(resource.name) row, or several (multi-show)", tag: tag,
                        parameters: [Self.ref("parameters", "IfNoneMatch"), Self.ref("parameters", "IfModifiedSince")],
                        responses: readResponses)
                ),
                (
                    "put",
                    Self.operation(
                        "replace_\(name)", "Replace a row; fields left out reset to their defaults", tag: tag,
                        parameters: [ifMatch, idempotency], body: Self.jsonBody(schema("replace")), responses: updateProblems)
                ),
                (
                    "patch",
                    Self.operation(
                        "update_\(name)", "Change the fields sent, merging field by field on a stale revision",
                        tag: tag, parameters: [ifMatch, idempotency], body: Self.jsonBody(schema("write")),
                        responses: updateProblems.filter { $0.0 != "409" } + [
                            ("409", Self.problem(["revision_conflict", "idempotency_key_in_use"]))
                        ])
                ),
            ]
                + (!resource.deletable
                    ? []
                    : [
                        (
                            "delete",
                            Self.operation(
                                "delete_\(name)", "Soft-delete a row; deleting a tombstone answers it again", tag: tag,
                                parameters: [
                                    ifMatch, idempotency,
                                    .object([
                                        ("name", "revision"), ("in", "query"), ("schema", Self.milliseconds),
                                        ("description", "The revision the delete is based on, instead of If-Match."),
                                    ]),
                                ],
                                responses: commonProblems + [
                                    ("200", Self.ok("The tombstone.", Self.ref("schemas", "Tombstone"))),
                                    ("400", Self.problem(["revision_required", "bad_request"])),
                                    ("403", Self.problem(["forbidden"])),
                                    ("404", Self.problem(["not_found"])),
                                    ("409", Self.problem(["revision_conflict", "idempotency_key_in_use"])),
                                    ("412", Self.problem(["precondition_failed"])),
                                    ("422", Self.problem(["idempotency_key_reused"])),
                                ])
                        )
                    ]))
    }
}
