import FerryHTTP
import Foundation

/// Checks shared by every route that takes a body.
enum RequestBody {
    /// 415 unless the request says `Content-Type: application/json` (parameters allowed).
    static func requireJSON(_ request: HTTPRequest) throws {
        guard let value = request.headers["Content-Type"], isJSON(value) else {
            throw Problem(415, "unsupported_media_type", "the body must be application/json")
        }
    }

    /// Whether a Content-Type value is `application/json`, any case, with optional
    /// parameters and optional whitespace around the type. On bytes: every write
    /// checks it, and Foundation's trimming went through NSString.
    static func isJSON(_ value: String) -> Bool {
        var bytes = value.utf8[...]
        if let semicolon = bytes.firstIndex(of: UInt8(ascii: ";")) { bytes = bytes[..<semicolon] }
        let blank: (UInt8) -> Bool = { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        while let first = bytes.first, blank(first) { bytes = bytes.dropFirst() }
        while let last = bytes.last, blank(last) { bytes = bytes.dropLast() }
        let expected = "application/json".utf8
        guard bytes.count == expected.count else { return false }
        // ASCII letters lower-cased by setting bit 5; the other bytes of the type must match exactly.
        return zip(bytes, expected).allSatisfy { byte, want in
            byte == want || (want >= UInt8(ascii: "a") && want <= UInt8(ascii: "z") && byte | 0x20 == want)
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
