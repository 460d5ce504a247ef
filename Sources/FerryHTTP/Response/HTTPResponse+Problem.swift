extension HTTPResponse {
    /// An RFC 9457 problem response: `{"type","title","status","detail",...}` as
    /// `application/problem+json`.
    ///
    /// - Parameters:
    ///   - status: The HTTP status, repeated in the body.
    ///   - title: A short summary; the status's reason phrase when nil.
    ///   - detail: An explanation of this occurrence; omitted when nil.
    ///   - type: The problem type URI; `about:blank` by default.
    ///   - extensions: Further members, in order, written after `status` and before
    ///     `detail` (RFC 9457 §3.2); a name the problem writes itself is dropped.
    ///   - headers: Extra header fields, e.g. `Allow` or `Retry-After`.
    public static func problem(
        status: Int, title: String? = nil, detail: String? = nil, type: String = "about:blank",
        extensions: [(String, JSONValue)] = [], headers: HTTPHeaders = HTTPHeaders()
    ) -> HTTPResponse {
        var members: [(String, JSONValue)] = [
            ("type", .string(type)),
            ("title", .string(title ?? HTTPStatus.reasonPhrase(status))),
            ("status", .int(status)),
        ]
        let own: Set<String> = detail == nil ? ["type", "title", "status"] : ["type", "title", "status", "detail"]
        members.append(contentsOf: extensions.filter { !own.contains($0.0) })
        if let detail { members.append(("detail", .string(detail))) }
        var headers = headers
        headers.replace("Content-Type", "application/problem+json")
        return HTTPResponse(status: status, headers: headers, bytes: JSONValue.object(members).bytes)
    }

    /// The plain problem response for a refused request: its status, detail and headers.
    public static func problem(_ error: HTTPError) -> HTTPResponse {
        problem(status: error.status, detail: error.detail, headers: error.headers)
    }
}

/// Turns a refusal into the response the client gets: the server's own refusals
/// (parser, timeouts, connection cap), the router's 404 and 405, and whatever a
/// handler throws. An application sets one to add its own members.
public typealias HTTPRefusal = @Sendable (HTTPError) -> HTTPResponse
