// A statement as sent to libpq: its SQL and text-format parameters, the checks the
// parameters pass first, and the C string arrays libpq takes them in.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CLibPQ

/// One SQL statement with text-format parameters, as sent in a pipeline.
public struct PostgresStatement: Sendable, Hashable {
    /// SQL text with `$1`, `$2`… placeholders; exactly one statement.
    public var sql: String
    /// Parameter values in PostgreSQL text format; nil is SQL NULL.
    public var params: [String?]

    /// Creates a statement from SQL and its text-format parameters.
    public init(_ sql: String, _ params: [String?] = []) {
        self.sql = sql
        self.params = params
    }
}

/// Runs `body` with a C array of NUL-terminated copies of `strings` (nil stays a null
/// pointer, which libpq reads as SQL NULL). The copies live only for the call.
///
/// Every statement of every request passes through here, so the copies share one
/// buffer (on the stack when small) instead of one `strdup` each.
func withCStringArray<R, E: Error>(
    _ strings: [String?],
    _ body: (UnsafePointer<UnsafePointer<CChar>?>?) throws(E) -> R
) throws(E) -> R {
    var total = 0
    for string in strings { if let string { total += string.utf8.count + 1 } }
    // Small parameter lists (nearly all) live on the stack.
    return try withUnsafeTemporaryAllocation(of: CChar.self, capacity: max(total, 1)) { storage throws(E) -> R in
        try withUnsafeTemporaryAllocation(of: UnsafePointer<CChar>?.self, capacity: max(strings.count, 1)) {
            pointers throws(E) -> R in
            var offset = 0
            for (index, string) in strings.enumerated() {
                guard var string else {
                    pointers[index] = nil
                    continue
                }
                let start = storage.baseAddress! + offset
                let count = string.withUTF8 { utf8 in
                    if let base = utf8.baseAddress { UnsafeMutableRawPointer(start).copyMemory(from: base, byteCount: utf8.count) }
                    return utf8.count
                }
                start[count] = 0
                pointers[index] = UnsafePointer(start)
                offset += count + 1
            }
            return try body(UnsafePointer(pointers.baseAddress!))
        }
    }
}

/// Text-format parameters cannot carry a NUL byte (C strings would silently truncate them), so
/// reject them up front with the code PostgreSQL itself uses for a NUL in text.
func checkParameters(_ params: [String?]) throws(PostgresError) {
    guard params.count <= Int(UInt16.max) else {
        throw PostgresError(kind: .protocolError, message: "too many parameters (\(params.count)); the protocol allows 65535")
    }
    for (offset, param) in params.enumerated() {
        guard var param else { continue }
        // memchr over the contiguous bytes: the generic UTF8View walk was several times slower.
        let hasNUL = param.withUTF8 { utf8 in
            guard let base = utf8.baseAddress else { return false }
            return memchr(base, 0, utf8.count) != nil
        }
        if hasNUL {
            throw PostgresError(
                kind: .server, message: "parameter $\(offset + 1) contains a NUL byte",
                sqlState: "22021"
            )
        }
    }
}
