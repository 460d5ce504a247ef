import FerryHTTP
import Foundation

// Reading a JSON request body without decoding it: the content type, the
// structure scan (shape, item count, depth), and the precheck of the
// top-level members' values against the columns (the members themselves,
// with their byte ranges, are ObjectMembers.swift: a 410 reads a tombstone's
// with it too). Bodies are handed to PostgreSQL as they came.

/// Checks shared by every route that takes a body.
enum RequestBody {
    /// 415 unless the request says `Content-Type: application/json` (parameters allowed),
    /// and 415 for a `charset` other than UTF-8's, which names it.
    static func requireJSON(_ request: HTTPRequest) throws {
        guard let value = request.headers["Content-Type"], isJSON(value) else {
            throw Problem(415, .unsupportedMediaType, "the body must be application/json")
        }
        if let charset = foreignCharset(value) {
            throw Problem(415, .unsupportedMediaType, "the body must be UTF-8 JSON: charset=\(charset) is not supported")
        }
    }

    /// The `charset` parameter of a Content-Type value when it names another encoding
    /// than UTF-8; nil when there is none. JSON is UTF-8 (RFC 8259 §8.1), and a client that
    /// says latin1 means its bytes: taken as UTF-8 its text is refused, or worse, read
    /// as other characters. Only values with a parameter are read (the `;` first).
    static func foreignCharset(_ value: String) -> String? {
        guard value.utf8.contains(UInt8(ascii: ";")) else { return nil }
        for parameter in value.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "charset" else { continue }
            var charset = pair[1].trimmingCharacters(in: .whitespaces)
            if charset.count >= 2, charset.hasPrefix("\""), charset.hasSuffix("\"") { charset = String(charset.dropFirst().dropLast()) }
            let lowered = charset.lowercased()
            if lowered != "utf-8" && lowered != "utf8" { return String(charset.prefix(40)) }
        }
        return nil
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
            throw Problem(413, .payloadTooLarge, "this body may have at most \(maxBytes) bytes")
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any] else {
            throw Problem(400, .invalidJson, "the body must be a JSON object")
        }
        return object
    }
}

// `package`, not internal: ferry-fuzz feeds it client bytes directly (bench/fuzz/README.md).
/// A cheap structural pass over a JSON body before it is sent to
/// PostgreSQL, which parses it for real.
///
/// It finds what Ferry needs without decoding: whether the top level is an
/// object or an array, how many elements a top-level array has (for
/// `limits.max_bulk_items`), and that the nesting is shallow enough (a
/// 2,000-deep document would otherwise exhaust PostgreSQL's parser stack).
/// It also refuses truncated documents and anything after the top-level
/// value, so that wrapping a single object as `[` body `]` is safe.
package struct BodyScan {
    package enum Top { case object, array }

    /// The top-level kind.
    package let top: Top
    /// Elements of a top-level array (0 for an object).
    package let count: Int

    /// Deepest accepted nesting.
    package static let maxDepth = 64

    package init(_ bytes: [UInt8]) throws {
        var depth = 0
        var inString = false
        var escaped = false
        var top: Top?
        var count = 0
        var closed = false
        var sawValueAtDepth1 = false
        // UTF-8 inside strings (outside them JSON is ASCII, which PostgreSQL's parser checks):
        // the continuation bytes still due, and the range the next one must fall in. Checked
        // here because the body reaches PostgreSQL as a Swift String, whose making replaces an
        // ill-formed sequence with U+FFFD: a row would keep text the client never sent.
        var due = 0
        var lowest: UInt8 = 0x80, highest: UInt8 = 0xBF
        for byte in bytes {
            if inString {
                if due > 0 {
                    guard byte >= lowest && byte <= highest else { throw Self.notUTF8 }
                    due -= 1
                    lowest = 0x80
                    highest = 0xBF
                    continue
                }
                if byte >= 0x80 {
                    // RFC 3629's table: no overlong forms, no surrogates, nothing past U+10FFFF.
                    switch byte {
                    case 0xC2...0xDF: due = 1
                    case 0xE0: due = 2; lowest = 0xA0
                    case 0xED: due = 2; highest = 0x9F
                    case 0xE1...0xEF: due = 2
                    case 0xF0: due = 3; lowest = 0x90
                    case 0xF4: due = 3; highest = 0x8F
                    case 0xF1...0xF3: due = 3
                    default: throw Self.notUTF8
                    }
                    escaped = false
                    continue
                }
                if escaped {
                    escaped = false
                } else if byte == 0x5C {
                    escaped = true
                } else if byte == 0x22 {
                    inString = false
                } else if byte < 0x20 {
                    throw Self.invalid("control character in a string")
                }
                continue
            }
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0D:
                continue
            default:
                break
            }
            if closed { throw Self.invalid("unexpected data after the top-level value") }
            switch byte {
            case 0x7B, 0x5B:  // { [
                if depth == 0 { top = byte == 0x7B ? .object : .array }
                if depth == 1, top == .array, !sawValueAtDepth1 { sawValueAtDepth1 = true; count += 1 }
                depth += 1
                if depth > Self.maxDepth {
                    throw Problem(400, .invalidJson, "the body nests deeper than \(Self.maxDepth) levels")
                }
            case 0x7D, 0x5D:  // } ]
                guard depth > 0 else { throw Self.invalid("unbalanced brackets") }
                depth -= 1
                if depth == 0 { closed = true }
            case 0x2C:  // ,
                if depth == 1, top == .array { sawValueAtDepth1 = false }
            default:
                guard depth > 0 else { throw Self.invalid("the body must be a JSON object or array") }
                if depth == 1, top == .array, !sawValueAtDepth1 { sawValueAtDepth1 = true; count += 1 }
                if byte == 0x22 { inString = true }
            }
        }
        guard let top, closed, !inString else { throw Self.invalid(bytes.isEmpty ? "the body is empty" : "the body is truncated") }
        self.top = top
        self.count = count
    }

    private static func invalid(_ detail: String) -> Problem { Problem(400, .invalidJson, "the body is not valid JSON: \(detail)") }

    private static var notUTF8: Problem { Problem(400, .invalidJson, "the body is not valid JSON: a string is not valid UTF-8") }
}

// `package`, not internal: ferry-fuzz feeds it client bytes directly (bench/fuzz/README.md).
/// Whether every field of a single PATCH or PUT body certainly passes
/// ``FieldValidation``: then ``FastUpdateSQL`` can leave the per-field check
/// out of its statement.
///
/// Why: in PostgreSQL that check is one expression over every column, built
/// and run for each statement, and it was a sizeable share of PostgreSQL's work
/// in a fast-path PATCH (see bench/api/README.md). Here it is a walk over a few bytes.
///
/// It must never pass a body FieldValidation would fail (that would write
/// what should have been a 422), so it answers true only when sure and false
/// otherwise; false just means PostgreSQL checks, as before. It is stricter
/// than FieldValidation where being exact would take a JSON decoder: an
/// integer must be written as plain digits (`1.0` and `1e2` are left to
/// PostgreSQL), a uuid must be unescaped and hyphenated all or nothing, and a
/// key given twice must be valid both times (jsonb keeps the last).
package struct FieldPrecheck {
    let resource: Resource
    /// `.patch` or `.put` (the path names the row, so `id` in the body is ignored).
    let mode: WriteMode

    /// Whether every member of `members` (read from `bytes`) certainly passes.
    package func passes(_ members: ObjectMembers, in bytes: [UInt8]) -> Bool {
        guard mode == .patch || mode == .put else { return false }
        for member in members.members {
            guard let column = column(named: bytes[member.key]) else { return false }
            switch column.name {
            case "id", "last_modified", "is_deleted":
                continue
            case "revision":
                guard Self.fits(member.value, .integer(min: 0, max: Int64.max), in: bytes) else { return false }
            default:
                if member.value == .null {
                    guard column.nullable else { return false }
                    continue
                }
                guard Self.fits(member.value, column.kind, in: bytes) else { return false }
            }
        }
        return true
    }

    /// A precheck of `mode` writes to `resource`.
    package init(resource: Resource, mode: WriteMode) {
        self.resource = resource
        self.mode = mode
    }

    private func column(named key: ArraySlice<UInt8>) -> Column? {
        resource.columns.first { $0.name.utf8.elementsEqual(key) }
    }

    /// `ValueKind.check` for a value that is not JSON null. Uuids and integers go through
    /// `ValueKind.accepts(id:)`, the check path and query ids get: it takes only digits
    /// (a sign allowed) in range and 32-hex-digit uuids with all four hyphens or none, a subset
    /// of what FieldValidation's pattern and numeric cast take.
    private static func fits(_ value: ObjectMembers.Value, _ kind: ValueKind, in bytes: [UInt8]) -> Bool {
        switch (kind, value) {
        case (.any, _): return true
        case (.string, .string): return true
        case (.uuid, .string(let range, escaped: false)), (.integer, .number(let range)):
            return kind.accepts(id: String(decoding: bytes[range], as: UTF8.self))
        case (.number, .number): return true
        case (.boolean, .boolean): return true
        case (.array, .array): return true
        case (.scalar, .string), (.scalar, .number), (.scalar, .boolean): return true
        default: return false
        }
    }
}
