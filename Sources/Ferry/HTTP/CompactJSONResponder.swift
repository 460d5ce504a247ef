import FerryHTTP

/// Makes every in-memory JSON and problem+json answer compact (``CompactJSON``),
/// whichever route, hook or replay produced it.
struct CompactJSONResponder: HTTPResponder {
    let inner: any HTTPResponder

    func respond(to request: HTTPRequest, context: RequestContext) -> HTTPResponse {
        var response = inner.respond(to: request, context: context)
        guard case .bytes(let body) = response.body, !body.isEmpty, let type = response.headers["Content-Type"],
              type.hasPrefix("application/json") || type.hasPrefix("application/problem+json"),
              let compact = CompactJSON.compacted(body)
        else { return response }
        response.body = .bytes(compact)
        return response
    }

    func runsInline(_ request: HTTPRequest) -> Bool { inner.runsInline(request) }
}
