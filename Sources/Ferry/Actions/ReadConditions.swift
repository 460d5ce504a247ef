import FerryHTTP

/// A conditional read's validators (RFC 9110 §13.2.2), parsed once:
/// `If-None-Match` first (weak comparison, `*` allowed); only without it,
/// `If-Modified-Since`, and only on GET and HEAD.
struct ReadConditions: Sendable, Equatable {
    enum NoneMatch: Sendable, Equatable {
        /// `*`: any current representation matches.
        case any
        /// The opaque tags listed, `W/` ignored (weak comparison).
        case tags([String])
    }

    var noneMatch: NoneMatch?
    /// `If-Modified-Since` in seconds since the epoch, when it applies.
    var modifiedSince: Int64?

    init(noneMatch: NoneMatch? = nil, modifiedSince: Int64? = nil) {
        self.noneMatch = noneMatch
        self.modifiedSince = modifiedSince
    }

    init(_ request: HTTPRequest) {
        if let header = request.headers["If-None-Match"] {
            noneMatch = EntityTag.parseList(header).map { .tags($0.map(\.opaque)) } ?? .any
        } else if request.method == "GET" || request.method == "HEAD" {
            modifiedSince = request.headers["If-Modified-Since"].flatMap(HTTPDateFormat.parse)
        }
    }

    /// The revisions `If-None-Match` names, as ``notModified(etag:lastModifiedMs:)``
    /// compares them: the tag must be the revision exactly as Ferry writes it
    /// (`"03"` names nothing); nil for `*`, no header or no revision named.
    var revisions: [Revision]? {
        guard case .tags(let tags) = noneMatch else { return nil }
        let revisions = tags.compactMap(Revision.init(canonical:))
        return revisions.isEmpty ? nil : revisions
    }

    /// Whether the client's copy, tagged `etag` and last changed at
    /// `lastModifiedMs`, is current: the answer is then 304.
    func notModified(etag: String, lastModifiedMs: Int64?) -> Bool {
        switch noneMatch {
        case .any: return true
        case .tags(let tags): return EntityTag.opaque(etag).map { tags.contains($0) } ?? false
        case nil:
            guard let modifiedSince, let lastModifiedMs else { return false }
            return lastModifiedMs / 1000 <= modifiedSince
        }
    }

    /// 304 with the validators and no body.
    static func notModifiedResponse(etag: String, lastModifiedMs: Int64?) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.reserveCapacity(2)
        headers.add("ETag", etag)
        if let lastModifiedMs { headers.add("Last-Modified", HTTPDateFormat.format(milliseconds: lastModifiedMs)) }
        return HTTPResponse(status: 304, headers: headers)
    }
}
