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
        for byte in bytes {
            if inString {
                if escaped { escaped = false } else if byte == 0x5C { escaped = true } else if byte == 0x22 { inString = false } else if byte < 0x20 {
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
            case 0x7B, 0x5B: // { [
                if depth == 0 { top = byte == 0x7B ? .object : .array }
                if depth == 1, top == .array, !sawValueAtDepth1 { sawValueAtDepth1 = true; count += 1 }
                depth += 1
                if depth > Self.maxDepth {
                    throw Problem(400, "invalid_json", "the body nests deeper than \(Self.maxDepth) levels")
                }
            case 0x7D, 0x5D: // } ]
                guard depth > 0 else { throw Self.invalid("unbalanced brackets") }
                depth -= 1
                if depth == 0 { closed = true }
            case 0x2C: // ,
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

    private static func invalid(_ detail: String) -> Problem { Problem(400, "invalid_json", "the body is not valid JSON: \(detail)") }
}
