import FerryHTTP
import Foundation

/// Whether a single PUT or PATCH body's `id` names another row than its path.
///
/// The path names the row, and the statement reads its id from there: an `id` in the
/// body was skipped, so `PATCH /v1/sets/A {"id": "B"}` answered 200 having changed A.
/// A client that echoes the row back sends the path's own id (any spelling of it: a
/// UUID's case, its hyphens), which passes; another one is a mistake the client must
/// hear of. `null` and an escaped string are left alone (no id, or none Ferry spells).
enum BodyID {
    /// `type` is the id column's SQL type (a domain's base type): text that PostgreSQL
    /// compares as equal (a `citext` in another case, also `extensions.citext` where the
    /// extension lives outside the search path; a `character(n)` with trailing blanks)
    /// is the same row. Of an `id` given twice, the last counts, as everywhere in a body.
    static func differs(_ members: ObjectMembers, in bytes: [UInt8], pathID: String, kind: ValueKind, type: String = "text") -> Bool {
        guard let member = members.last(named: "id", in: bytes) else { return false }
        let text: String
        switch member.value {
        case .string(let range, escaped: false), .number(let range): text = String(decoding: bytes[range], as: UTF8.self)
        case .null: return false
        case .string(_, escaped: true): return differs(decoding: bytes, pathID: pathID, kind: kind, type: type)
        default: return true
        }
        return differs(text: text, pathID: pathID, kind: kind, type: type)
    }

    /// The same for a body ``ObjectMembers`` does not read (a member name with an escape:
    /// `"i\u0064"` is `id` to jsonb) or whose id is an escaped string (`json.dumps` escapes
    /// non-ASCII): decoded whole. Foundation keeps a name's last value, as jsonb does.
    static func differs(decoding bytes: [UInt8], pathID: String, kind: ValueKind, type: String = "text") -> Bool {
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any], let id = object["id"] else {
            return false
        }
        switch id {
        case is NSNull: return false
        case let text as String: return differs(text: text, pathID: pathID, kind: kind, type: type)
        case let number as NSNumber where Self.isInteger(kind):
            return differs(text: number.stringValue, pathID: pathID, kind: kind, type: type)
        default: return true
        }
    }

    private static func isInteger(_ kind: ValueKind) -> Bool {
        if case .integer = kind { return true }
        return false
    }

    /// Whether the id `text` names another row than `pathID`, as the id column compares.
    private static func differs(text: String, pathID: String, kind: ValueKind, type: String) -> Bool {
        switch kind {
        case .uuid: return Self.uuidDigits(text) != Self.uuidDigits(pathID)
        case .integer: return Int64(text) != Int64(pathID)
        default:
            if type == "citext" || type.hasSuffix(".citext") { return text.lowercased() != pathID.lowercased() }
            if type.hasPrefix("character(") || type == "character" || type == "bpchar" {
                return Self.trimmingBlanks(text) != Self.trimmingBlanks(pathID)
            }
            return text != pathID
        }
    }

    /// The 422 a single write answers with it: one `errors` entry, as any refused field's.
    static func mismatch(pathID: String) -> Problem {
        let status = 422, index = 0  // the one item of a single write
        return Problem(
            status, .validationFailed, "the body does not fit the resource",
            extra: [
                (
                    "errors",
                    .array([
                        .object([
                            ("index", .int(index)), ("id", .string(pathID)), ("status", .int(status)),
                            ("code", .string(ProblemCode.validationFailed.rawValue)), ("field", .string("id")),
                            ("reason", .string("id_mismatch")),
                            ("detail", .string("the body's id is not the path's: a row's id never changes")),
                        ])
                    ])
                )
            ])
    }

    /// The text without its trailing blanks, which `character(n)` ignores.
    private static func trimmingBlanks(_ text: String) -> Substring {
        var trimmed = Substring(text)
        while trimmed.last == " " { trimmed.removeLast() }
        return trimmed
    }

    /// A UUID's 32 hex digits, lower-cased, or the text as it is when it is no UUID.
    private static func uuidDigits(_ text: String) -> String {
        guard ValueKind.isUUID(text) else { return text }
        return String(text.lowercased().filter { $0 != "-" })
    }
}
