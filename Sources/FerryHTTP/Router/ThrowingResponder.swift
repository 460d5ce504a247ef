/// Wraps a throwing handler so that an error becomes a refusal's response,
/// never a dropped connection.
struct ThrowingResponder: HTTPResponder {
    let handler: @Sendable (HTTPRequest, RequestContext) throws -> HTTPResponse
    let refusal: HTTPRefusal

    init(
        _ handler: @escaping @Sendable (HTTPRequest, RequestContext) throws -> HTTPResponse,
        refusal: @escaping HTTPRefusal
    ) {
        self.handler = handler
        self.refusal = refusal
    }

    func respond(to request: HTTPRequest, context: RequestContext) -> HTTPResponse {
        do {
            return try handler(request, context)
        } catch let error as HTTPError {
            return refusal(error)
        } catch {
            context.logger.error("handler failed: \(String(describing: error))")
            return refusal(
                HTTPError(
                    status: 500, reason: .handlerFailed, detail: "The server failed to answer this request.",
                    closeConnection: false))
        }
    }
}
