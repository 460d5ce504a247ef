import FerryHTTP

/// The OpenAPI 3.1 description served at `GET /openapi.json`, built from the
/// schema catalog in force, so it always matches the resources being served.
public struct OpenAPIDocument: Sendable {
    /// The resources to describe.
    public let catalog: SchemaCatalog
    /// Limits and switches that shape the API (bulk sizes, sign-up, page sizes).
    public let configuration: FerryConfiguration
    /// Whether the server answers a method on a concrete path; operations it
    /// does not serve are left out, so the document never promises a route.
    public let served: @Sendable (_ method: String, _ path: String) -> Bool
    /// The streams a device may subscribe to, as `GET /v1` lists them: the
    /// document carries them in `x-ferry-streams`, for generators (`ferry
    /// generate swift` makes each root a `FerryStreamRoot`).
    public let streams: [StreamListing]

    /// A document for `catalog` as configured, describing what `served` accepts (default: everything).
    public init(
        catalog: SchemaCatalog, configuration: FerryConfiguration, streams: [StreamListing] = [],
        served: @escaping @Sendable (_ method: String, _ path: String) -> Bool = { _, _ in true }
    ) {
        self.catalog = catalog
        self.configuration = configuration
        self.streams = streams
        self.served = served
    }

    public var json: JSONValue {
        var paths: [(String, JSONValue)] = []
        for resource in resources {
            paths += resourcePaths(resource)
        }
        paths += fixedPaths
        paths += consolePaths
        paths = paths.compactMap(servedOnly)
        return .object([
            ("openapi", "3.1.0"),
            (
                "info",
                .object([
                    ("title", "Ferry sync API"),
                    ("version", .string(FerryVersion.current)),
                    (
                        "description",
                        """
                        An offline-first sync server: each sync-enabled PostgreSQL table is a REST resource. \
                        Every error is application/problem+json with a stable `code`.
                        """
                    ),
                ])
            ),
            ("jsonSchemaDialect", "https://spec.openapis.org/oas/3.1/dialect/base"),
            ("security", .array([.object([("bearerAuth", .array([]))])])),
            ("paths", .object(paths)),
            ("components", components),
            ("x-ferry-streams", .array(streams.map(\.json))),
        ])
    }

    /// A path item with only the operations the server answers; nil when none is left.
    func servedOnly(_ item: (String, JSONValue)) -> (String, JSONValue)? {
        guard case .object(let members) = item.1 else { return item }
        let concrete = item.0.replacingOccurrences(of: "{id}", with: "x")
        let methods: Set<String> = ["get", "put", "post", "delete", "patch", "head", "options"]
        let kept = members.filter { !methods.contains($0.0) || served($0.0.uppercased(), concrete) }
        return kept.contains { methods.contains($0.0) } ? (item.0, .object(kept)) : nil
    }

    /// What a bearer may be, as configured.
    var bearerDescription: String {
        let issuers = configuration.auth.jwtProviders.map(\.issuer).joined(separator: ", ")
        switch (configuration.auth.builtinTokens, acceptsJWTs) {
        case (true, true): return "A token from POST /v1/auth/token, or a JWT from one of these issuers: \(issuers)."
        case (false, true): return "A JWT from one of these issuers: \(issuers)."
        default: return "A token from POST /v1/auth/token."
        }
    }

    /// The resources in name order.
    var resources: [Resource] { catalog.names.compactMap { catalog[$0] } }

    var components: JSONValue {
        var schemas: [(String, JSONValue)] = Self.sharedSchemas(jwt: acceptsJWTs)
        schemas.append(("BatchRequest", Self.batchRequestSchema(maxOperations: configuration.limits.maxBatchOperations)))
        for resource in resources { schemas += resourceSchemas(resource) }
        return .object([
            (
                "securitySchemes",
                .object(
                    [
                        (
                            "bearerAuth",
                            .object([
                                ("type", "http"), ("scheme", "bearer"),
                                ("description", .string(bearerDescription)),
                            ])
                        )
                    ]
                        + (configuration.auth.builtinTokens
                            ? [
                                (
                                    "basicAuth",
                                    .object([
                                        ("type", "http"), ("scheme", "basic"),
                                        (
                                            "description",
                                            "Name and password; only for POST /v1/auth/token (a user's) and POST /console/api/session (an operator's)."
                                        ),
                                    ])
                                ),
                                (
                                    "consoleAuth",
                                    .object([
                                        ("type", "http"), ("scheme", "bearer"),
                                        ("description", "A console token from POST /console/api/session or `ferry operator token`; never a user's."),
                                    ])
                                ),
                            ] : []))
            ),
            ("schemas", .object(schemas)),
            ("parameters", .object(Self.sharedParameters(configuration))),
            ("headers", .object(Self.sharedHeaders)),
        ])
    }

    /// A component name for a resource: OpenAPI allows only `[A-Za-z0-9._-]` there.
    static func componentName(_ name: String) -> String {
        String(name.map { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" || $0 == ".") ? $0 : "_" })
    }

    /// `{"$ref": "#/components/<kind>/<name>"}`.
    static func ref(_ kind: String, _ name: String) -> JSONValue {
        .object([("$ref", .string("#/components/\(kind)/\(name)"))])
    }
}
