import FerryHTTP

extension OpenAPIDocument {
    /// Ferry's own routes: catalog, changes, batch, auth and operations.
    var fixedPaths: [(String, JSONValue)] {
        var paths: [(String, JSONValue)] = [
            (
                "/v1",
                .object([
                    (
                        "get",
                        Self.operation(
                            "catalog", "List the resources and their columns", tag: "sync",
                            responses: commonProblems + [("200", Self.ok("The resources.", Self.ref("schemas", "Catalog")))])
                    )
                ])
            ),
            (
                "/v1/changes",
                .object([
                    (
                        "get",
                        Self.operation(
                            "changes", "Every readable row changed after a cursor", tag: "sync",
                            parameters: [
                                Self.query(
                                    "since", Self.type("string", ("pattern", "^(now|1[A-Za-z0-9_-]+)?$")),
                                    "The cursor of the previous answer; none for a full sync; `now` for the cursor of this moment and no changes."),
                                Self.query(
                                    "limit",
                                    Self.type(
                                        "integer", ("minimum", 1), ("maximum", .int(ChangesRequest.maxLimit)),
                                        ("default", .int(ChangesRequest.defaultLimit))), "The most changes in one answer."),
                                Self.query("resources", resourcesSchema, "Comma-separated resource names; default all."),
                                Self.query(
                                    "wait", Self.type("integer", ("minimum", 0), ("maximum", 999_999_999)),
                                    "A long poll: when nothing is after the cursor, hold the request up to this many seconds (at most `live.max_wait_seconds`) until something is."
                                ),
                                streamParameter(
                                    "A subscription: `<stream name>:<row id>`, a stream the app declared (`ferry.sync_stream`). The answer is that row and what hangs from it, public rows included, with a cursor of its own; without it, the default stream. A stream the caller may not read answers as one whose id does not exist (an empty page); an unknown name or an id of the wrong type is 400."
                                ),
                                .object([
                                    ("name", "Last-Event-ID"), ("in", "header"),
                                    ("schema", Self.type("string", ("pattern", "^(1[A-Za-z0-9_-]+)?$"))),
                                    (
                                        "description",
                                        "The `id` of the last event an event stream received: the cursor to go on from (it wins over `since`)."
                                    ),
                                ]),
                                Self.ref("parameters", "IfNoneMatch"),
                            ].compactMap { $0 },
                            responses: commonProblems.filter { $0.0 != "429" } + [
                                ("200", Self.changesAnswer),
                                (
                                    "304",
                                    Self.ok(
                                        "Nothing changed since the cursor in If-None-Match, or the page is the one whose tag it names.",
                                        headers: ["ETag", "Cache-Control"])
                                ),
                                ("400", Self.problem(["invalid_query", "bad_request"])),
                                ("410", Self.problem(["cursor_expired"])),
                                ("429", Self.problem(["rate_limited", "too_many_waiters"], headers: ["Retry-After"])),
                            ])
                    )
                ])
            ),
            (
                "/v1/changes/wait",
                .object([
                    (
                        "post",
                        Self.operation(
                            "waitForChanges", "Wait until one of several streams has something after its cursor", tag: "sync",
                            body: Self.jsonBody(Self.changesWaitSchema(maxStreams: configuration.live.maxWaitStreams)),
                            responses: commonProblems.filter { $0.0 != "429" } + Self.bodyProblems + [
                                (
                                    "200",
                                    Self.ok(
                                        "The keys of `since` whose stream has something after its cursor that the caller may read: at once when one has, as soon as a commit gives one news, else none after `wait` seconds (at most `live.max_wait_seconds`). A stream the caller may not read is never named.",
                                        Self.object(
                                            [("changed", Self.type("array", ("items", Self.type("string"))))], required: ["changed"]),
                                        headers: ["Cache-Control"])
                                ),
                                ("429", Self.problem(["rate_limited", "too_many_waiters"], headers: ["Retry-After"])),
                            ])
                    )
                ])
            ),
            (
                "/v1/batch",
                .object([
                    (
                        "post",
                        Self.operation(
                            "batch", "Run operations in order in one transaction", tag: "sync",
                            parameters: [Self.ref("parameters", "IdempotencyKey")],
                            body: Self.jsonBody(Self.ref("schemas", "BatchRequest")),
                            responses: commonProblems + Self.bodyProblems + [
                                ("200", Self.ok("Every operation applied.", Self.ref("schemas", "BatchResponse"))),
                                ("404", Self.problem(["not_found"])),
                                ("409", Self.problem(["revision_conflict", "already_exists", "idempotency_key_in_use"])),
                                ("410", Self.problem(["gone"])),
                                ("412", Self.problem(["precondition_failed"])),
                                ("422", Self.problem(["validation_failed", "unknown_field", "too_many_items", "idempotency_key_reused"])),
                            ])
                    )
                ])
            ),
        ]
        if configuration.auth.builtinTokens {
            paths.append(
                (
                    "/v1/auth/token",
                    .object([
                        (
                            "post",
                            Self.operation(
                                "signIn", "Exchange a name and password for a bearer token", tag: "auth",
                                responses: [
                                    ("201", Self.ok("A new token.", Self.ref("schemas", "Token"))),
                                    ("401", Self.problem(["unauthorized"])),
                                    ("403", Self.problem(["forbidden"])),
                                    ("429", Self.problem(["rate_limited"], headers: ["Retry-After"])),
                                ],
                                security: .array([.object([("basicAuth", .array([]))])]))
                        ),
                        (
                            "delete",
                            Self.operation(
                                "revokeToken", "Revoke the calling token", tag: "auth",
                                responses: commonProblems + (acceptsJWTs ? [("400", Self.problem(["bad_request"]))] : []) + [
                                    (
                                        "204",
                                        Self.ok(
                                            "Revoked: refused from now on by this instance; other instances may accept it for up to auth.token_cache_seconds."
                                        )
                                    )
                                ])
                        ),
                    ])
                ))
        }
        paths += [
            (
                "/v1/auth/me",
                .object([
                    (
                        "get",
                        Self.operation(
                            "me", "The caller", tag: "auth",
                            responses: commonProblems + [("200", Self.ok("The caller.", Self.ref("schemas", "User")))])
                    )
                ])
            ),
            (
                "/v1/users/lookup",
                .object([
                    (
                        "get",
                        Self.operation(
                            "lookupUser", "The user with exactly this name, to share with", tag: "auth",
                            parameters: [
                                .object([
                                    ("name", "name"), ("in", "query"), ("required", true),
                                    (
                                        "schema",
                                        Self.type("string", ("pattern", "^[A-Za-z0-9_][A-Za-z0-9_.@+-]{0,319}$"), ("maxLength", 320))
                                    ),
                                    (
                                        "description",
                                        .string(
                                            "The exact user name (case-sensitive), or a JWT user's lookup name such as a verified email "
                                                + "(ASCII case aside); no prefix or pattern. Each caller may ask 30 times in 10 minutes.")
                                    ),
                                ])
                            ],
                            responses: commonProblems + [
                                ("200", Self.ok("The user.", Self.ref("schemas", "FoundUser"))),
                                ("400", Self.problem(["invalid_query"])),
                                ("404", Self.problem(["not_found"])),
                            ])
                    )
                ])
            ),
        ]
        if configuration.auth.allowSignup, configuration.auth.builtinTokens {
            paths.append(
                (
                    "/v1/users",
                    .object([
                        (
                            "post",
                            Self.operation(
                                "signUp", "Create an account", tag: "auth",
                                body: Self.jsonBody(Self.ref("schemas", "SignUp")),
                                responses: Self.bodyProblems + [
                                    ("201", Self.ok("The new user.", Self.ref("schemas", "User"))),
                                    ("409", Self.problem(["already_exists"])),
                                    ("422", Self.problem(["validation_failed"])),
                                ],
                                security: Self.open)
                        )
                    ])
                ))
        }
        paths += [
            (
                "/healthz",
                .object([
                    (
                        "get",
                        Self.operation(
                            "healthz", "200 while the process serves", tag: "operations",
                            responses: [("200", Self.ok("Serving.", Self.type("object")))], security: Self.open)
                    )
                ])
            ),
            (
                "/readyz",
                .object([
                    (
                        "get",
                        Self.operation(
                            "readyz", "200 when PostgreSQL and memcached answer", tag: "operations",
                            responses: [
                                ("200", Self.ok("Ready.", Self.type("object"))),
                                ("503", Self.ok("Not ready; the body names what is down.", Self.type("object"))),
                            ], security: Self.open)
                    )
                ])
            ),
            (
                "/metrics",
                .object([
                    (
                        "get",
                        Self.operation(
                            "metrics", "Prometheus text exposition 0.0.4", tag: "operations",
                            responses: [
                                (
                                    "200",
                                    .object([
                                        ("description", "Metrics."),
                                        (
                                            "content",
                                            .object([
                                                ("text/plain", .object([("schema", Self.type("string"))]))
                                            ])
                                        ),
                                    ])
                                )
                            ], security: Self.open)
                    )
                ])
            ),
            (
                "/openapi.json",
                .object([
                    (
                        "get",
                        Self.operation(
                            "openapi", "This description", tag: "operations",
                            responses: [("200", Self.ok("OpenAPI 3.1.", Self.type("object")))], security: Self.open)
                    )
                ])
            ),
        ]
        return paths
    }

    /// `resources=`: one or more names of served resources, comma-separated
    /// (an empty list, an empty name or an unknown one is 400 `invalid_query`).
    var resourcesSchema: JSONValue {
        // No resource at all: a pattern nothing matches, since every list is refused.
        let name = resources.isEmpty ? "(?!)" : "(" + resources.map { Self.regexEscaped($0.name) }.joined(separator: "|") + ")"
        return Self.type("string", ("pattern", .string("^\(name)(,\(name))*$")))
    }

    /// `text` matched literally in an ECMA-262 pattern.
    static func regexEscaped(_ text: String) -> String {
        var out = ""
        for character in text {
            if "\\^$.|?*+()[]{}".contains(character) { out.append("\\") }
            out.append(character)
        }
        return out
    }

    /// The feed's 200: a page as JSON, or, with `Accept: text/event-stream`, a stream of pages.
    static var changesAnswer: JSONValue {
        .object([
            (
                "description",
                "Changes in commit order; follow `cursor` while `has_more`. With `Accept: text/event-stream`, a stream of server-sent events: `event: changes`, `id` the page's cursor, `data` the page; `event: problem` ends it."
            ),
            ("headers", .object([("ETag", ref("headers", "ETag")), ("Cache-Control", ref("headers", "Cache-Control"))])),
            (
                "content",
                .object([
                    ("application/json", .object([("schema", ref("schemas", "Changes"))])),
                    ("text/event-stream", .object([("schema", type("string"))])),
                ])
            ),
        ])
    }

    static func query(_ name: String, _ schema: JSONValue, _ description: String) -> JSONValue {
        .object([("name", .string(name)), ("in", "query"), ("schema", schema), ("description", .string(description))])
    }
}
