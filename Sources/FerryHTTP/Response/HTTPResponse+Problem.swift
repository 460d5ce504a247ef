extension HTTPResponse {
    /// An RFC 9457 problem response:
    /// `{"type","title","status","code","detail",...extra}` as
    /// `application/problem+json`.
    ///
    /// - Parameters:
    ///   - status: The HTTP status, repeated in the body.
    ///   - code: Ferry's stable machine-readable code, e.g. `not_found`.
    ///   - title: A short summary; the status's reason phrase when nil.
    ///   - detail: An explanation of this occurrence; omitted when nil.
    ///   - type: The problem type URI; `about:blank` by default.
    ///   - extra: Further members in order, e.g. `("current", .raw(rowJSON))`.
    ///   - headers: Extra header fields, e.g. `Allow` or `Retry-After`.
    public static func problem(
        status: Int, code: String, title: String? = nil, detail: String? = nil,
        type: String = "about:blank", extra: [(String, JSONValue)] = [], headers: HTTPHeaders = HTTPHeaders()
    ) -> HTTPResponse {
        var members: [(String, JSONValue)] = [
            ("type", .string(type)),
            ("title", .string(title ?? HTTPStatus.reasonPhrase(status))),
            ("status", .int(status)),
            ("code", .string(code)),
        ]
        if let detail { members.append(("detail", .string(detail))) }
        let reserved: Set<String> = ["type", "title", "status", "code", "detail"]
        members.append(contentsOf: extra.filter { !reserved.contains($0.0) })
        var headers = headers
        headers.replace("Content-Type", "application/problem+json")
        return HTTPResponse(status: status, headers: headers, bytes: JSONValue.object(members).bytes)
    }

    /// The problem response for a refused request.
    public static func problem(_ error: HTTPError) -> HTTPResponse {
        problem(status: error.status, code: error.code, detail: error.detail)
    }
}
