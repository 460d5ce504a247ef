// Step 4 of a request's trip (docs/ARCHITECTURE.md): content codings both
// ways around every responder call, on the thread that runs the handler. What
// the codings are is Coding/ContentCoding.swift; compressing an answer is
// Response/HTTPResponse+Coding.swift.

extension ServerShared {
    /// The responder's answer, with content codings applied both ways: the request body
    /// decoded and the validators made plain before the handler runs, the answer compressed
    /// as the client accepts after. Runs where the handler runs (a worker, or the I/O
    /// thread for inline handlers), so inflating and deflating never stall a loop.
    func answer(_ request: HTTPRequest, context: RequestContext) -> HTTPResponse {
        var request = request
        do {
            try request.decodeContentEncoding(maxBodyBytes: configuration.limits.maxBodyBytes)
        } catch {
            return configuration.refusal(error.error)
        }
        let settings = configuration.compression
        let accepted = request.headers.values("Accept-Encoding")
        let coding =
            settings.level > 0 && !accepted.isEmpty
            ? AcceptEncoding(accepted.joined(separator: ",")).preferred() : .identity
        let ifNoneMatch = request.headers["If-None-Match"]
        for name in ["If-None-Match", "If-Match"] {
            if let value = request.headers[name] {
                let plain = EntityTagCoding.plain(request.headers.values(name).joined(separator: ", "))
                if plain != value { request.headers.replace(name, plain) }
            }
        }
        let response = responder.respond(to: request, context: context)
        // Mid-stream the head is out: the rest of the body goes as it is.
        if context.resumption?.streaming == true { return response }
        return response.encoded(for: coding, settings: settings, ifNoneMatch: ifNoneMatch)
    }
}
