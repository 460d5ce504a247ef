import FerryHTTP
import Foundation

/// Checks shared by every route that takes a body.
enum RequestBody {
    /// 415 unless the request says `Content-Type: application/json` (parameters allowed).
    static func requireJSON(_ request: HTTPRequest) throws {
        let type = request.headers["Content-Type"]?.split(separator: ";").first?
            .trimmingCharacters(in: .whitespaces).lowercased()
        guard type == "application/json" else {
            throw Problem(415, "unsupported_media_type", "the body must be application/json")
        }
    }

    /// A small JSON object body (sign-up and the like), as a dictionary.
    static func smallObject(_ request: HTTPRequest, maxBytes: Int = 16 * 1024) throws -> [String: Any] {
        try requireJSON(request)
        guard request.body.count <= maxBytes else {
            throw Problem(413, "payload_too_large", "this body may have at most \(maxBytes) bytes")
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any] else {
            throw Problem(400, "invalid_json", "the body must be a JSON object")
        }
        return object
    }
}
