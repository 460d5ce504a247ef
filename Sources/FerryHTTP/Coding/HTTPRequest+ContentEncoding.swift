extension HTTPRequest {
    /// Decodes a body sent with `Content-Encoding` (gzip, x-gzip, deflate, identity; several
    /// in the order applied), so that handlers only ever see plain bodies; the field is then
    /// removed and `Content-Length` says the decoded size.
    ///
    /// - Throws: 415 for a coding the server cannot decode (with `Accept-Encoding` naming
    ///   those it can, RFC 9110 §15.5.16), 400 for a corrupt or truncated stream, 413 when
    ///   the decoded body would exceed `maxBodyBytes`, found while inflating.
    mutating func decodeContentEncoding(maxBodyBytes: Int) throws(HTTPCodingRefusal) {
        let fields = headers.values("Content-Encoding")
        guard !fields.isEmpty else { return }
        var codings: [ContentCoding] = []
        for token in fields.flatMap({ $0.split(separator: ",") }) {
            let name = token.trimmingASCIISpaces
            if name.isEmpty { continue }
            guard let coding = ContentCoding(token: name) else { throw .unsupported(String(name)) }
            if coding != .identity { codings.append(coding) }
        }
        headers.remove("Content-Encoding")
        // An empty body has nothing to decode, whatever it claims.
        guard !body.isEmpty, !codings.isEmpty else { return }
        for coding in codings.reversed() {
            do {
                body = try Inflater.inflate(body, coding: coding, limit: maxBodyBytes)
            } catch .tooLarge {
                throw .tooLarge(limit: maxBodyBytes)
            } catch {
                throw .corrupt(coding)
            }
        }
        if headers.contains("Content-Length") { headers.replace("Content-Length", String(body.count)) }
    }
}

/// Why a coded request body was refused.
enum HTTPCodingRefusal: Error, Equatable {
    case unsupported(String)
    case corrupt(ContentCoding)
    case tooLarge(limit: Int)

    /// The refusal. The body was read whole, so the connection stays usable.
    var error: HTTPError {
        switch self {
        case .unsupported(let name):
            HTTPError(
                status: 415, reason: .contentCodingUnsupported,
                detail: "The content coding \(name) is not supported; send gzip, deflate or identity.",
                headers: HTTPHeaders([("Accept-Encoding", "gzip, deflate")]), closeConnection: false)
        case .corrupt(let coding):
            HTTPError(
                status: 400, reason: .contentCodingCorrupt,
                detail: "The \(coding.rawValue) request body is corrupt or cut short.", closeConnection: false)
        case .tooLarge(let limit):
            HTTPError(
                status: 413, reason: .bodyTooLarge, detail: "The decoded request body exceeds \(limit) bytes.",
                closeConnection: false)
        }
    }
}
