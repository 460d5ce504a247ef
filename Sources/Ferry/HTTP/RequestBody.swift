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
        // Over the contiguous bytes: every write checks it, and the generic zip of two UTF-8 views was far slower.
        var value = value
        return value.withUTF8 { all in
            var start = 0, end = all.firstIndex(of: UInt8(ascii: ";")) ?? all.count
            let blank: (UInt8) -> Bool = { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
            while start < end, blank(all[start]) { start += 1 }
            while end > start, blank(all[end - 1]) { end -= 1 }
            let expected: StaticString = "application/json"
            guard end - start == expected.utf8CodeUnitCount else { return false }
            let want = UnsafeBufferPointer(start: expected.utf8Start, count: expected.utf8CodeUnitCount)
            // ASCII letters lower-cased by setting bit 5; the other bytes of the type must match exactly.
            for offset in 0..<want.count {
                let byte = all[start + offset], wanted = want[offset]
                guard byte == wanted || (wanted >= UInt8(ascii: "a") && wanted <= UInt8(ascii: "z") && byte | 0x20 == wanted) else {
                    return false
                }
            }
            return true
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
