/// A parsed request line: `method SP request-target SP HTTP-version` (RFC 9112 §3).
struct RequestLine {
    var method: String
    var target: RequestTarget
    var version: HTTPVersion

    /// Parses one request line, CRLF already removed.
    ///
    /// Separators are exactly one SP each; the method is a token, the target
    /// holds visible ASCII only, and the version is `HTTP/DIGIT.DIGIT`.
    static func parse(_ line: UnsafeBufferPointer<UInt8>) throws(HTTPError) -> RequestLine {
        var i = 0
        while i < line.count, ASCII.isTchar(line[i]) { i += 1 }
        guard i > 0, i < line.count, line[i] == ASCII.space else {
            throw .badRequest("The request line must start with a method token followed by one space.")
        }
        let methodEnd = i
        i += 1
        let targetStart = i
        while i < line.count, line[i] != ASCII.space {
            guard ASCII.isTargetByte(line[i]) else {
                throw .badRequest("The request target contains a forbidden character.")
            }
            i += 1
        }
        guard i > targetStart, i < line.count else {
            throw .badRequest("The request line must be `method SP target SP version`.")
        }
        let targetEnd = i
        let version = try parseVersion(UnsafeBufferPointer(rebasing: line[(i + 1)...]))
        let method = String(decoding: UnsafeBufferPointer(rebasing: line[..<methodEnd]), as: UTF8.self)
        let target = try RequestTarget.parse(
            UnsafeBufferPointer(rebasing: line[targetStart..<targetEnd]), method: method)
        return RequestLine(method: method, target: target, version: version)
    }

    /// `HTTP-version = "HTTP" "/" DIGIT "." DIGIT`, case-sensitive; a major other than 1 is 505.
    static func parseVersion(_ v: UnsafeBufferPointer<UInt8>) throws(HTTPError) -> HTTPVersion {
        guard v.count == 8,
            v[0] == UInt8(ascii: "H"), v[1] == UInt8(ascii: "T"), v[2] == UInt8(ascii: "T"),
            v[3] == UInt8(ascii: "P"), v[4] == ASCII.slash,
            ASCII.isDigit(v[5]), v[6] == ASCII.dot, ASCII.isDigit(v[7])
        else {
            throw .badRequest("The protocol version must be `HTTP/1.1` or `HTTP/1.0`.")
        }
        let version = HTTPVersion(major: Int(v[5] - 0x30), minor: Int(v[7] - 0x30))
        guard version.major == 1 else { throw .versionNotSupported(version) }
        return version
    }
}
