/// Wraps a throwing handler so that an error becomes a problem response,
/// never a dropped connection.
struct ThrowingResponder: HTTPResponder {
    let handler: @Sendable (HTTPRequest, RequestContext) throws -> HTTPResponse

    init(_ handler: @escaping @Sendable (HTTPRequest, RequestContext) throws -> HTTPResponse) {
        self.handler = handler
    }

    func respond(to request: HTTPRequest, context: RequestContext) -> HTTPResponse {
        do {
            return try handler(request, context)
        } catch let error as HTTPError {
            return .problem(error)
        } catch {
            context.logger.error("handler failed: \(String(describing: error))")
            return .problem(status: 500, code: "internal_error", detail: "The server failed to answer this request.")
        }
    }
}
