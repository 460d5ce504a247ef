import Crypto
import FerryHTTP

/// The pages of `GET /v1/changes` that a shared HTTP cache may keep (API.md,
/// "Caching"): a plain poll of a public stream, read as no user
/// (ChangesPlan+PublicView.swift), is the same for every reader, so it is
/// answered `Cache-Control: public, max-age=<live.public_page_max_age_seconds>` with a strong `ETag` of its
/// body. Every other answer of the route is `private, no-store`.
extension ChangesRoutes {
    /// Whether this request may be answered with a page for everyone: a
    /// subscription's plain poll (no wait, no event stream, no cursor from
    /// `Last-Event-ID`, which no cache key holds), outside a batch, not `since=now`
    /// (a cached "now" would be an old moment).
    static func mayShare(_ request: HTTPRequest, _ parsed: ChangesRequest, caller: Caller) -> Bool {
        parsed.subscription != nil && caller.transaction == nil && !parsed.startsNow && !parsed.stream && parsed.wait == nil
            && request.headers["Last-Event-ID"] == nil && (request.method == "GET" || request.method == "HEAD")
    }

    /// The answer of a public page, or nil when the request must be answered
    /// as the caller's own (its stream is not public, or the page read as no
    /// user held a revoked entry: read again as the caller, ``ChangesPlan/ViewedPage``).
    func sharedAnswer(_ request: HTTPRequest, _ parsed: ChangesRequest, plan: ChangesPlan, caller: Caller) throws -> HTTPResponse? {
        switch try plan.viewedPublicly().viewedPoll(as: caller, on: database) {
        case .everyones(let page):
            return Self.sharedAnswer(page, request: request, parsed: parsed, maxAge: live.settings.publicPageMaxAgeSeconds)
        case .callers(let page): return Self.answer(page, request: request, parsed: parsed)
        case .revoking: return nil
        }
    }

    /// A page for everyone: `public, max-age` (by default one second, the
    /// longest a device polling the stream then sees a commit late; within
    /// it every device asking for the same page, such as a popular set's
    /// first pages, which its new subscribers walk with the same cursors, is
    /// answered from one computation), its body's tag, and 304 when
    /// `If-None-Match` names that tag. The "any activity since?" check
    /// (`If-None-Match` naming the request's own cursor, nothing after it) is
    /// answered as on every page: a private 304 carrying the new cursor.
    static func sharedAnswer(_ page: ChangesPage, request: HTTPRequest, parsed: ChangesRequest, maxAge: Int) -> HTTPResponse {
        let conditions = ReadConditions(request)
        if page.isEmpty, parsed.hasSince, conditions.notModified(etag: "\"\(parsed.since.token)\"", lastModifiedMs: nil) {
            return answer(page, request: request, parsed: parsed)
        }
        let body = page.body
        let tag = "\"s" + Base64URL.encode(Array(SHA256.hash(data: body).prefix(18))) + "\""
        // Vary: what else chooses the answer. Never Authorization: the page is everyone's.
        let headers = HTTPHeaders([
            ("ETag", tag), ("Cache-Control", "public, max-age=\(maxAge)"), ("Vary", "Accept, Last-Event-ID"),
        ])
        if conditions.notModified(etag: tag, lastModifiedMs: nil) { return HTTPResponse(status: 304, headers: headers) }
        return .json(body, headers: headers)
    }
}
