import FerryHTTP

extension OpenAPIDocument {
    /// A JSON response with an optional schema and named shared headers.
    static func ok(_ description: String, _ schema: JSONValue? = nil, headers: [String] = []) -> JSONValue {
        var members: [(String, JSONValue)] = [("description", .string(description))]
        if !headers.isEmpty { members.append(("headers", .object(headers.map { ($0, ref("headers", $0)) }))) }
        if let schema { members.append(("content", .object([("application/json", .object([("schema", schema)]))]))) }
        return .object(members)
    }

    /// A problem+json response; `codes` are the contract codes it may carry.
    static func problem(_ codes: [String], headers: [String] = [], schema: JSONValue = ref("schemas", "Problem")) -> JSONValue {
        var members: [(String, JSONValue)] = [("description", .string("Problem: " + codes.joined(separator: ", ")))]
        if !headers.isEmpty { members.append(("headers", .object(headers.map { ($0, ref("headers", $0)) }))) }
        members.append(("content", .object([("application/problem+json", .object([("schema", schema)]))])))
        return .object(members)
    }

    /// Answers every authenticated route may give; with JWT providers, their refusals too.
    var commonProblems: [(String, JSONValue)] {
        [
            ("401", Self.problem(["unauthorized"] + (acceptsJWTs ? JWTRefusal.codes : []))),
            ("429", Self.problem(["rate_limited"], headers: ["Retry-After"])),
            ("503", Self.problem(["unavailable", "storage_full"] + (acceptsJWTs ? ["jwks_unavailable"] : []), headers: ["Retry-After"])),
        ]
    }

    /// Whether JWTs from identity providers are accepted (`auth.jwt_providers`).
    var acceptsJWTs: Bool { !configuration.auth.jwtProviders.isEmpty }

    /// Answers every route with a JSON body may give.
    static let bodyProblems: [(String, JSONValue)] = [
        ("400", problem(["bad_request", "invalid_json"])),
        ("413", problem(["payload_too_large"])),
        ("415", problem(["unsupported_media_type", "unsupported_content_encoding"])),
    ]

    static func jsonBody(_ schema: JSONValue, required: Bool = true) -> JSONValue {
        .object([("required", .bool(required)), ("content", .object([("application/json", .object([("schema", schema)]))]))])
    }

    static func operation(
        _ id: String, _ summary: String, tag: String, parameters: [JSONValue] = [], body: JSONValue? = nil,
        responses: [(String, JSONValue)], security: JSONValue? = nil
    ) -> JSONValue {
        var members: [(String, JSONValue)] = [("operationId", .string(id)), ("summary", .string(summary)), ("tags", [.string(tag)])]
        if !parameters.isEmpty { members.append(("parameters", .array(parameters))) }
        if let body { members.append(("requestBody", body)) }
        // Parameters can make any request line longer than the server reads
        // (`limits.max_request_line_bytes`): 414 before routing, for every operation.
        var responses = responses
        if !parameters.isEmpty, !responses.contains(where: { $0.0 == "414" }) {
            responses.append(("414", problem(["uri_too_long"])))
        }
        members.append(("responses", .object(responses.sorted { $0.0 < $1.0 })))
        if let security { members.append(("security", security)) }
        return .object(members)
    }

    /// No authentication.
    static let open = JSONValue.array([])
}
