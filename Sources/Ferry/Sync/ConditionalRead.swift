import FerryHTTP

/// Conditional GET and HEAD (RFC 9110 §13.2.2): `If-None-Match` first
/// (weak comparison, `*` allowed); only without it, `If-Modified-Since`.
enum ConditionalRead {
    /// Whether the request's validators say the client's copy is current.
    static func notModified(_ request: HTTPRequest, etag: String, lastModifiedMs: Int64?) -> Bool {
        if let inm = request.headers["If-None-Match"] {
            return EntityTag.noneMatchHits(inm, etag: etag)
        }
        guard request.method == "GET" || request.method == "HEAD",
              let lastModifiedMs, let ims = request.headers["If-Modified-Since"].flatMap(HTTPDateFormat.parse)
        else { return false }
        return lastModifiedMs / 1000 <= ims
    }

    /// 304 with the validators and no body.
    static func response(etag: String, lastModifiedMs: Int64?) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.reserveCapacity(2)
        headers.add("ETag", etag)
        if let lastModifiedMs { headers.add("Last-Modified", HTTPDateFormat.format(milliseconds: lastModifiedMs)) }
        return HTTPResponse(status: 304, headers: headers)
    }
}
