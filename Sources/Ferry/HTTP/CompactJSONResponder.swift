import FerryHTTP

/// Makes every in-memory JSON and problem+json answer compact (``CompactJSON``),
/// whichever route, hook or replay produced it.
struct CompactJSONResponder: Middleware {
    func respond(to request: HTTPRequest, context: RequestContext, next: Next) throws -> HTTPResponse {
        var response = try next(request, context)
        guard case .bytes(let body) = response.body, !body.isEmpty, let type = response.headers["Content-Type"],
              type.hasPrefix("application/json") || type.hasPrefix("application/problem+json"),
              let compact = CompactJSON.compacted(body)
        else { return response }
        response.body = .bytes(compact)
        return response
    }
}
