import FerryHTTP

/// One page of an Index answer: the rows and the `paging` member.
public struct IndexPage: Sendable {
    /// The rows, a JSON array rendered by PostgreSQL.
    public var data: [UInt8]
    /// The paging token; nil when the result fits one page.
    public var token: String?
    /// This page's number (1-based).
    public var page: Int
    /// How many pages the result has.
    public var pages: Int
    /// How many rows the result (the snapshot) has.
    public var total: Int
    /// The next page's URL (path and query, relative to the server), nil on the last page.
    public var next: String?
    /// The page's entity tag: `"i-<total>-<hash>"` on page 1 (the hash covers every
    /// `(id, revision)` of the whole result), `"i<page>-<rows>-<hash>"` on later
    /// pages (the hash covers the page's rows).
    public var etag: String

    /// `{"data": [...], "paging": {"token", "page", "pages", "total", "next"}}`.
    public var body: [UInt8] {
        JSONValue.object([
            ("data", .raw(data)),
            (
                "paging",
                .object([
                    ("token", token.map { .string($0) } ?? .null),
                    ("page", .int(page)),
                    ("pages", .int(pages)),
                    ("total", .int(total)),
                    ("next", next.map { .string($0) } ?? .null),
                ])
            ),
        ]).bytes
    }

    /// `ETag`, and `Link: <next>; rel="next"` when there is a next page.
    public var headers: HTTPHeaders {
        var headers = HTTPHeaders([("ETag", etag)])
        if let next { headers.add("Link", "<\(next)>; rel=\"next\"") }
        return headers
    }

    /// The 200 response, with `extraHeaders` (an ETag, say) added.
    public func response(extraHeaders: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        var headers = headers
        for field in extraHeaders.fields { headers.add(field.name, field.value) }
        return .json(body, headers: headers)
    }

    /// The URL of page `page` of snapshot `token`: the request's own path and query
    /// (as sent, so filters stay exactly as the client wrote them), without any
    /// previous `paging_token` and `page`, plus the new ones.
    static func link(for request: HTTPRequest, token: String, page: Int) -> String {
        let path: String
        if request.target.hasPrefix("/") {
            path = String(request.target.prefix { $0 != "?" })
        } else {
            path = request.path
        }
        var parameters = (request.rawQuery ?? "").split(separator: "&").filter { item in
            let name = item.prefix { $0 != "=" }
            return name != "paging_token" && name != "page"
        }.map(String.init)
        parameters += ["paging_token=\(token)", "page=\(page)"]
        return path + "?" + parameters.joined(separator: "&")
    }
}
