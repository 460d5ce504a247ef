// A response compressed for the client (`HTTPResponse.encoded`), with the
// per-coding entity tags and `Vary`. Here, after Coding/ContentCoding.swift,
// whose codings and settings it applies; `ServerShared.answer` calls it.

extension HTTPResponse {
    /// This response as it goes to a client that prefers `coding`.
    ///
    /// JSON bodies are compressed (in-memory ones from `settings.minimumBytes` up, streams
    /// always) with `Content-Encoding` set and a strong `ETag` made per coding; every JSON
    /// answer and every 304 says `Vary: Accept-Encoding`. A 304 names the tag in the form
    /// the client's `If-None-Match` used. A body the handler coded itself is left alone.
    func encoded(for coding: ContentCoding, settings: HTTPCompression, ifNoneMatch: String?) -> HTTPResponse {
        guard settings.level > 0, !headers.contains("Content-Encoding") else { return self }
        var response = self
        if status == 304 {
            response.addVaryAcceptEncoding()
            if let etag = headers["ETag"] {
                response.headers.replace("ETag", EntityTagCoding.notModified(etag, ifNoneMatch: ifNoneMatch))
            }
            return response
        }
        guard let type = headers["Content-Type"], HTTPCompression.compresses(contentType: type) else { return self }
        response.addVaryAcceptEncoding()
        guard coding != .identity, !HTTPStatus.forbidsBody(status) else { return response }
        switch body {
        case .bytes(let bytes):
            guard !bytes.isEmpty, bytes.count >= settings.minimumBytes else { return response }
            response.body = .bytes(Deflater.compress(bytes, coding: coding, level: settings.level))
        case .stream(let producer):
            let level = settings.level
            response.body = .stream { writer in
                writer.startCoding(coding, level: level)
                try producer(&writer)
            }
        case .parked:
            // A parked answer is not the answer yet; a parked stream's parts go out as they are.
            return response
        }
        response.headers.replace("Content-Encoding", coding.rawValue)
        if let etag = headers["ETag"] { response.headers.replace("ETag", EntityTagCoding.coded(etag, coding)) }
        return response
    }

    /// Caches must key on Accept-Encoding; a `Vary` that already covers it is kept as it is.
    private mutating func addVaryAcceptEncoding() {
        for value in headers.values("Vary") {
            for member in value.split(separator: ",") {
                let name = member.trimmingASCIISpaces
                if name == "*" || HTTPHeaders.equalNames(String(name), "Accept-Encoding") { return }
            }
        }
        headers.add("Vary", "Accept-Encoding")
    }
}
