import FerryHTTP

/// What every request the parser hands on must satisfy, whatever the bytes were:
/// within the limits, well-formed names and values, framing that is not ambiguous.
enum RequestInvariants {
    static func check(_ request: HTTPRequest, limits: HTTPLimits) {
        require(!request.method.isEmpty && request.method.utf8.allSatisfy(isTokenByte), "method \(request.method.debugDescription)")
        require(request.target.utf8.count <= limits.maxRequestLineBytes, "target of \(request.target.utf8.count) bytes over the line limit")
        // HTTP/1.2 to 1.9 are read as 1.1 (RFC 9110 §2.5); only major version 1 gets through.
        require(request.version.major == 1, "version \(request.version)")
        require(
            request.path.hasPrefix("/") || request.path == "*" || request.method == "CONNECT",
            "path \(request.path.debugDescription) for target \(request.target.debugDescription)")
        require(request.headers.count <= limits.maxHeaderCount, "\(request.headers.count) fields over the count limit")
        // Each field line is at least `name:value` and CRLF. A value's obs-text bytes reach the
        // handler as U+FFFD (three UTF-8 bytes for one on the wire), so that character counts one.
        let fieldBytes = request.headers.fields.reduce(0) { $0 + $1.name.utf8.count + wireBytes($1.value) + 3 }
        require(fieldBytes <= limits.maxHeaderBytes, "\(fieldBytes) bytes of fields over the header limit")
        for (name, value) in request.headers.fields {
            require(!name.isEmpty && name.utf8.allSatisfy(isTokenByte), "field name \(name.debugDescription)")
            require(!value.utf8.contains { $0 == 0 || $0 == 0x0A || $0 == 0x0D }, "field value \(value.debugDescription)")
            require(value.utf8.first.map(isBlank) != true && value.utf8.last.map(isBlank) != true, "untrimmed value \(value.debugDescription)")
        }
        require(request.body.count <= limits.maxBodyBytes, "body of \(request.body.count) bytes over the limit")
        let chunked = request.headers.contains("Transfer-Encoding")
        let lengths = request.headers.values("Content-Length")
        require(!(chunked && !lengths.isEmpty), "both Transfer-Encoding and Content-Length")
        if let length = lengths.first, !chunked {
            let declared = length.split(separator: ",").first.map { $0.trimmingBlanks } ?? ""
            require(Int(declared) == request.body.count, "Content-Length \(length) with a body of \(request.body.count)")
        }
        if request.version.minor >= 1 {
            require(request.headers.values("Host").count == 1, "an HTTP/1.1 request without exactly one Host")
        }
    }

    /// `tchar` (RFC 9110 §5.6.2).
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"): true
        default: Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }

    /// The fewest bytes a value can have come from.
    static func wireBytes(_ value: String) -> Int {
        value.unicodeScalars.reduce(0) { $0 + ($1 == "\u{FFFD}" ? 1 : String($1).utf8.count) }
    }

    private static func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
}

extension Substring {
    /// Without leading and trailing spaces and tabs.
    var trimmingBlanks: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
