#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs `body` with a C array of NUL-terminated copies of `strings` (nil stays a null
/// pointer, which libpq reads as SQL NULL). The copies live only for the call.
func withCStringArray<R, E: Error>(
    _ strings: [String?],
    _ body: (UnsafePointer<UnsafePointer<CChar>?>?) throws(E) -> R
) throws(E) -> R {
    let copies: [UnsafeMutablePointer<CChar>?] = strings.map { $0.map { strdup($0)! } }
    defer { for copy in copies { free(copy) } }
    let pointers = copies.map { UnsafePointer($0) }
    let result: Result<R, E> = pointers.withUnsafeBufferPointer { buffer in
        do throws(E) { return .success(try body(buffer.baseAddress)) } catch { return .failure(error) }
    }
    return try result.get()
}

/// Text-format parameters cannot carry a NUL byte (C strings would silently truncate them), so
/// reject them up front with the code PostgreSQL itself uses for a NUL in text.
func checkParameters(_ params: [String?]) throws(PostgresError) {
    guard params.count <= Int(UInt16.max) else {
        throw PostgresError(kind: .protocolError, message: "too many parameters (\(params.count)); the protocol allows 65535")
    }
    for (offset, param) in params.enumerated() where param?.utf8.contains(0) == true {
        throw PostgresError(
            kind: .server, message: "parameter $\(offset + 1) contains a NUL byte",
            sqlState: "22021"
        )
    }
}
