import FerryHTTP

extension OpenAPIDocument {
    /// The console's API under `/console/api` (docs/API.md, "Console"), when
    /// `console.enabled`: every operation takes a console token (`consoleAuth`),
    /// signing in takes an operator's name and password.
    var consolePaths: [(String, JSONValue)] {
        guard configuration.console.enabled else { return [] }
        let api = "/console/api"
        let problems: [(String, JSONValue)] = [
            ("400", Self.problem(["invalid_query"])),
            ("401", Self.problem(["unauthorized"])),
            ("503", Self.problem(["unavailable"], headers: ["Retry-After"])),
        ]
        let user = Self.pathParameter("user", Self.consoleUUID, "A user's id.")
        let limit = { (max: Int) in
            Self.query("limit", Self.type("integer", ("minimum", 1), ("maximum", .int(max))), "The most entries in the answer.")
        }
        let write = { (members: [(String, JSONValue)]) in
            Self.jsonBody(
                .object(
                    Self.members(
                        Self.object(
                            [("confirm", Self.type("boolean", ("const", true)))] + members,
                            required: ["confirm"])) + [("additionalProperties", false)]))
        }
        let writeProblems: [(String, JSONValue)] =
            Self.bodyProblems + [
                ("401", Self.problem(["unauthorized"])), ("403", Self.problem(["forbidden"])),
                ("422", Self.problem(["confirmation_required"])),
                ("503", Self.problem(["unavailable"], headers: ["Retry-After"])),
            ]
        let object = { (description: String) in Self.type("object", ("description", .string(description))) }
        var paths: [(String, JSONValue)] = [
            (
                api + "/session",
                .object([
                    (
                        "post",
                        Self.consoleOperation(
                            "consoleSignIn", "Sign in to the console with an operator's name and password",
                            responses: [
                                (
                                    "201",
                                    Self.ok(
                                        "A console token.",
                                        Self.object(
                                            [
                                                ("token", Self.type("string")), ("expires_at", Self.milliseconds),
                                                ("operator", object("The operator.")),
                                            ], required: ["token", "expires_at", "operator"]))
                                ),
                                ("401", Self.problem(["unauthorized"])),
                                ("429", Self.problem(["rate_limited"], headers: ["Retry-After"])),
                                ("503", Self.problem(["unavailable"], headers: ["Retry-After"])),
                            ], security: .array([.object([("basicAuth", .array([]))])]))
                    ),
                    (
                        "get",
                        Self.consoleOperation(
                            "consoleSession", "The signed-in operator",
                            responses: problems.filter { $0.0 != "400" } + [("200", Self.ok("The operator.", object("`operator`")))])
                    ),
                    (
                        "delete",
                        Self.consoleOperation(
                            "consoleSignOut", "End the calling console token",
                            responses: problems.filter { $0.0 != "400" } + [("204", Self.ok("Signed out."))])
                    ),
                ])
            ),
            (
                api + "/resources",
                .object([
                    (
                        "get",
                        Self.consoleOperation(
                            "consoleResources",
                            "Every resource with its columns, sync rules, counts and the feed's retention",
                            responses: problems + [("200", Self.ok("The resources.", object("resources, counts, rules, access_scopes, retention")))])
                    )
                ])
            ),
            (
                api + "/users",
                .object([
                    (
                        "get",
                        Self.consoleOperation(
                            "consoleUsers", "Users by any part of their name, or by id",
                            parameters: [
                                Self.query(
                                    "search", Self.type("string", ("maxLength", 200)),
                                    "Part of a name (case-insensitive; names starting with it first), or a user id."),
                                limit(500),
                            ],
                            responses: problems + [("200", Self.ok("The users.", object("`users`")))])
                    )
                ])
            ),
            (
                api + "/users/{user}",
                .object([
                    (
                        "get",
                        Self.consoleOperation(
                            "consoleUser",
                            "A user: what they may read per resource, their tokens and latest refused requests, the app's streams, their open waits on every instance that answers within 2 s (each naming its instance), and how many instances answered",
                            parameters: [user],
                            responses: problems + [
                                ("200", Self.ok("The user.", object("user, resources, tokens, refusals, streams, waiting"))),
                                ("404", Self.problem(["not_found"])),
                            ])
                    )
                ])
            ),
            (
                api + "/users/{user}/changes",
                .object([
                    (
                        "get",
                        Self.consoleOperation(
                            "consoleUserChanges",
                            "What GET /v1/changes answers the user from a cursor, on the default stream or a subscription, and why",
                            parameters: [
                                user,
                                Self.query(
                                    "since", Self.type("string", ("pattern", "^(now|1[A-Za-z0-9_-]+)?$")), "A device's cursor; none for a full sync."),
                                Self.query("limit", Self.type("integer", ("minimum", 1), ("maximum", .int(ChangesRequest.maxLimit))), "Page size."),
                                Self.query("resources", resourcesSchema, "Comma-separated resource names; default all."),
                                streamParameter("A subscription, <stream name>:<id>, as a device names it; none for the default stream."),
                            ].compactMap { $0 },
                            responses: problems + [
                                ("200", Self.ok("The feed's answer (`status`, `body`) and `explanation`.", object("The answer."))),
                                ("404", Self.problem(["not_found"])),
                            ])
                    )
                ])
            ),
            (
                api + "/users/{user}/tokens/{token}/revoke",
                .object([
                    (
                        "post",
                        Self.consoleOperation(
                            "consoleRevokeToken",
                            "Revoke one of a user's tokens (admins; confirmed and audited)",
                            parameters: [
                                user,
                                Self.pathParameter(
                                    "token", Self.type("string", ("pattern", "^[0-9a-fA-F]{16}$")),
                                    "A token's id from the user's token list."),
                            ],
                            body: write([]),
                            responses: writeProblems + [
                                ("200", Self.ok("Revoked.", object("revoked, token_id"))),
                                ("404", Self.problem(["not_found"])),
                            ])
                    )
                ])
            ),
            (
                api + "/users/{user}/tokens/revoke",
                .object([
                    (
                        "post",
                        Self.consoleOperation(
                            "consoleRevokeUserTokens",
                            "Revoke all of a user's tokens (admins; confirmed and audited)",
                            parameters: [user],
                            body: write([]),
                            responses: writeProblems + [
                                ("200", Self.ok("Done.", object("user_id, revoked_tokens"))),
                                ("404", Self.problem(["not_found"])),
                            ])
                    )
                ])
            ),
            (
                api + "/users/{user}/disable",
                .object([
                    (
                        "post",
                        Self.consoleOperation(
                            "consoleDisableUser",
                            "Disable a user: their tokens are revoked, no new one is issued, their JWTs are refused (admins; confirmed and audited)",
                            parameters: [user],
                            body: write([]),
                            responses: writeProblems + [
                                ("200", Self.ok("Done.", object("user_id, disabled, revoked_tokens"))),
                                ("404", Self.problem(["not_found"])),
                            ])
                    )
                ])
            ),
            (
                api + "/users/{user}/enable",
                .object([
                    (
                        "post",
                        Self.consoleOperation(
                            "consoleEnableUser",
                            "Enable a disabled user again (admins; confirmed and audited)",
                            parameters: [user],
                            body: write([]),
                            responses: writeProblems + [
                                ("200", Self.ok("Done.", object("user_id, disabled, revoked_tokens"))),
                                ("404", Self.problem(["not_found"])),
                            ])
                    )
                ])
            ),
            (
                api + "/health",
                .object([
                    (
                        "get",
                        Self.consoleOperation(
                            "consoleHealth",
                            "Requests, errors, latency, pool, memcached and the feed's frontier lag, as JSON",
                            responses: problems + [("200", Self.ok("The figures now.", object("Totals since start; rates from two samples.")))])
                    )
                ])
            ),
            (
                api + "/purge",
                .object([
                    (
                        "post",
                        Self.consoleOperation(
                            "consolePurge",
                            "Purge tombstones and access log entries now (admins; confirmed and audited)",
                            body: write([("retention_days", Self.type("integer", ("minimum", 0), ("maximum", 36_500)))]),
                            responses: writeProblems + [
                                ("200", Self.ok("What was purged.", object("retention_days, tombstones, access_log_entries")))
                            ])
                    )
                ])
            ),
            (
                api + "/jwks/refetch",
                .object([
                    (
                        "post",
                        Self.consoleOperation(
                            "consoleRefetchKeys",
                            "Fetch every JWT provider's keys now (admins; confirmed and audited); withdrawn keys are refused before the answer",
                            body: write([]),
                            responses: writeProblems + [
                                (
                                    "200",
                                    Self.ok(
                                        "Each provider's fetch.",
                                        object("`providers`: issuer, status (fetched, failed, running), keys, withdrawn, reason"))
                                )
                            ])
                    )
                ])
            ),
            (
                api + "/audit",
                .object([
                    (
                        "get",
                        Self.consoleOperation(
                            "consoleAudit", "The audit log, newest first; searched by operator, action, target or request id",
                            parameters: [
                                limit(1_000),
                                Self.query(
                                    "search", Self.type("string", ("maxLength", 200)),
                                    "Entries whose operator, action, target (as JSON) or request id contain this (case-insensitive)."),
                                Self.query(
                                    "before", Self.type("integer", ("minimum", 1), ("maximum", .int(Int(Int64.max)))),
                                    "Only entries older than this entry id (the next page)."),
                            ],
                            responses: problems + [("200", Self.ok("The entries.", object("`entries`")))])
                    )
                ])
            ),
        ]
        for resource in resources {
            let name = Self.componentName(resource.name)
            let filters = resource.columns.filter {
                !ConsoleRowsQuery.reserved.contains($0.name) && ConsoleRowsQuery.isFilterable($0.kind)
            }.map { column in
                Self.query(column.name, Self.consoleFilterSchema(column), "Equality on \(column.name).")
            }
            paths.append(
                (
                    api + "/resources/\(PercentEncoding.encoded(resource.name))/rows",
                    .object([
                        (
                            "get",
                            Self.consoleOperation(
                                "consoleRows_\(name)",
                                "Browse \(resource.name) past Row Level Security, tombstones included, paged through snapshots",
                                parameters: [
                                    Self.query("deleted", Self.type("string", ("enum", ["any", "live", "deleted"])), "Which rows; default any."),
                                    Self.query("order", Self.consoleOrderSchema(resource), "`column[.asc|.desc]`; then id."),
                                    Self.query("writer", Self.consoleUUID, "Rows this user last wrote."),
                                    limit(ConsoleRowsQuery.maxLimit), Self.ref("parameters", "paging"),
                                ] + filters,
                                responses: problems + [
                                    ("200", Self.ok("A page of rows with their history fields.", object("data, paging"))),
                                    ("404", Self.problem(["paging_token_not_found"])),
                                    ("410", Self.problem(["paging_token_expired"])),
                                    ("503", Self.problem(["unavailable", "paging_unavailable"], headers: ["Retry-After"])),
                                ])
                        )
                    ])
                ))
            paths.append(
                (
                    api + "/resources/\(PercentEncoding.encoded(resource.name))/rows/{id}",
                    .object([
                        (
                            "get",
                            Self.consoleOperation(
                                "consoleRow_\(name)",
                                "One \(resource.name) row and its history as far as Ferry keeps it",
                                parameters: [Self.pathParameter("id", Self.pathIDSchema, "The row's id.")],
                                responses: problems.filter { $0.0 != "400" } + [
                                    ("200", Self.ok("The row and its history.", object("resource, history"))),
                                    ("400", Self.problem(["bad_request"])),
                                    ("404", Self.problem(["not_found"])),
                                ])
                        )
                    ])
                ))
            paths.append(
                (
                    api + "/users/{user}/rows/\(PercentEncoding.encoded(resource.name))",
                    .object([
                        (
                            "get",
                            Self.consoleOperation(
                                "consoleUserRows_\(name)",
                                "GET /v1/\(resource.name) as the user asks it, answered as the user",
                                parameters: [user, Self.ref("parameters", "paging")],
                                responses: problems + [
                                    ("200", Self.ok("The user's answer (`status`, `body`).", object("user, request, status, body"))),
                                    ("404", Self.problem(["not_found"])),
                                ])
                        )
                    ])
                ))
        }
        return paths
    }

    /// A console operation: tagged `console`, with the console token unless `security` says otherwise.
    static func consoleOperation(
        _ id: String, _ summary: String, parameters: [JSONValue] = [], body: JSONValue? = nil,
        responses: [(String, JSONValue)], security: JSONValue? = nil
    ) -> JSONValue {
        operation(
            id, summary, tag: "console", parameters: parameters, body: body, responses: responses,
            security: security ?? .array([.object([("consoleAuth", .array([]))])]))
    }

    static func pathParameter(_ name: String, _ schema: JSONValue, _ description: String) -> JSONValue {
        .object([("name", .string(name)), ("in", "path"), ("required", true), ("schema", schema), ("description", .string(description))])
    }

    /// A console filter's value: one value of the column's type (``ConsoleRowsQuery``).
    static func consoleFilterSchema(_ column: Column) -> JSONValue {
        switch column.kind {
        case .uuid: consoleUUID
        case .integer(_, let max): type("string", ("pattern", .string("^-?[0-9]{1,\(String(max).count - 1)}$")))
        case .boolean: type("string", ("enum", ["true", "false"]))
        default: type("string")
        }
    }

    /// A UUID as Ferry reads one: with its four hyphens, or none.
    static let consoleUUID = type(
        "string",
        (
            "pattern",
            "^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|[0-9a-fA-F]{32})$"
        ))

    /// `order=` as the console reads it: one column, with an optional `.asc` or `.desc`.
    static func consoleOrderSchema(_ resource: Resource) -> JSONValue {
        let column = "(" + resource.columns.map { regexEscaped($0.name) }.joined(separator: "|") + ")(\\.asc|\\.desc)?"
        return type("string", ("pattern", .string("^\(column)$")))
    }
}
