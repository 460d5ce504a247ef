import FerryHTTP

/// What runs around every write handler: the `Idempotency-Key` check
/// (outermost, so a replay does no work) and the rank rules.
struct WriteHooks: Sendable {
    /// The methods that are writes.
    static let methods: Set<String> = ["POST", "PUT", "PATCH", "DELETE"]

    let idempotency: IdempotentWrites
    let ranks: RankRewriter

    func respond(
        _ request: HTTPRequest, _ context: RequestContext, next: (HTTPRequest, RequestContext) -> HTTPResponse
    ) throws -> HTTPResponse {
        try idempotency.respond(request, context) { request, context in try ranks.respond(request, context, next: next) }
    }
}
