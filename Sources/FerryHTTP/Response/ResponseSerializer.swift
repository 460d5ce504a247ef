/// How a response body is delimited on the wire.
enum ResponseFraming: Equatable {
    /// `Content-Length: n`.
    case length(Int)
    /// `Transfer-Encoding: chunked`.
    case chunked
    /// No length: the body ends when the connection closes (HTTP/1.0 streams).
    case closeDelimited
    /// No body and no length field (1xx, 204, 304).
    case none
}

/// Writes response heads into a byte buffer, ready for one send.
enum ResponseSerializer {
    /// Status lines for 100...599, built once.
    private static let statusLines: [[UInt8]] = (0...599).map { status in
        Array("HTTP/1.1 \(status) \(HTTPStatus.reasonPhrase(status))\r\n".utf8)
    }

    /// Fields the server writes itself; a handler's copies are dropped.
    private static let managed = ["content-length", "transfer-encoding", "connection", "date", "server", "x-request-id"]

    static let continueResponse: [UInt8] = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    /// Appends the status line and header section.
    static func writeHead(
        status: Int, headers: HTTPHeaders, framing: ResponseFraming, keepAlive: Bool, http10: Bool,
        requestID: String, date: [UInt8], server: [UInt8], into out: inout [UInt8]
    ) {
        if (100...599).contains(status) {
            out.append(contentsOf: statusLines[status])
        } else {
            out.append(contentsOf: "HTTP/1.1 \(status) Status\r\n".utf8)
        }
        for field in headers.fields where !isManaged(field.name) {
            appendSafe(field.name, to: &out)
            out.append(contentsOf: [58, 32])  // ": "
            appendSafe(field.value, to: &out)
            out.append(contentsOf: [13, 10])
        }
        switch framing {
        case .length(let n):
            out.append(contentsOf: "Content-Length: ".utf8)
            appendDecimal(n, to: &out)
            out.append(contentsOf: [13, 10])
        case .chunked:
            out.append(contentsOf: "Transfer-Encoding: chunked\r\n".utf8)
        case .closeDelimited, .none:
            break
        }
        out.append(contentsOf: "Date: ".utf8)
        out.append(contentsOf: date)
        out.append(contentsOf: server)
        out.append(contentsOf: "\r\nX-Request-Id: ".utf8)
        out.append(contentsOf: requestID.utf8)
        out.append(contentsOf: [13, 10])
        if !keepAlive {
            out.append(contentsOf: "Connection: close\r\n".utf8)
        } else if http10 {
            out.append(contentsOf: "Connection: keep-alive\r\n".utf8)
        }
        out.append(contentsOf: [13, 10])
    }

    private static func isManaged(_ name: String) -> Bool {
        let count = name.utf8.count
        guard count == 4 || count == 6 || count == 10 || count == 12 || count == 14 || count == 17 else { return false }
        for m in managed where HTTPHeaders.equalNames(m, name) { return true }
        return false
    }

    /// Copies header text, turning CR, LF and NUL into spaces so that a
    /// handler's value can never split the response.
    private static func appendSafe(_ text: String, to out: inout [UInt8]) {
        // Copy whole, then patch: appending byte by byte was the serializer's largest cost.
        let start = out.count
        out.append(contentsOf: text.utf8)
        for index in start..<out.count where out[index] == 13 || out[index] == 10 || out[index] == 0 {
            out[index] = 32
        }
    }

    static func appendDecimal(_ value: Int, to out: inout [UInt8]) {
        if value == 0 { out.append(48); return }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
            UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var n = value
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buf in
            while n > 0 && count < 20 {
                buf[19 - count] = UInt8(48 + n % 10)
                n /= 10
                count += 1
            }
            out.append(contentsOf: buf[(20 - count)...])
        }
    }
}
