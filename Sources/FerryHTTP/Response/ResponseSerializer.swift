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

    /// Fields the server writes itself, a handler's copies dropped: Content-Length,
    /// Transfer-Encoding, Connection, Date, Server and X-Request-Id (see `isManaged`).

    static let continueResponse: [UInt8] = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    /// Appends the status line and header section.
    static func writeHead(
        status: Int, headers: HTTPHeaders, framing: ResponseFraming, keepAlive: Bool, http10: Bool,
        requestID: String, date: [UInt8], server: [UInt8], into out: inout [UInt8]
    ) {
        if (100...599).contains(status) {
            out.append(contentsOf: statusLines[status])
        } else {
            out.append(contentsOf: Array("HTTP/1.1 \(status) Status\r\n".utf8))
        }
        for field in headers.fields where !isManaged(field.name) {
            appendSafe(field.name, to: &out)
            out.append(58); out.append(32)  // ": "
            appendSafe(field.value, to: &out)
            out.append(13); out.append(10)
        }
        switch framing {
        case .length(let n):
            appendStatic("Content-Length: ", to: &out)
            appendDecimal(n, to: &out)
            out.append(13); out.append(10)
        case .chunked:
            appendStatic("Transfer-Encoding: chunked\r\n", to: &out)
        case .closeDelimited, .none:
            break
        }
        appendStatic("Date: ", to: &out)
        out.append(contentsOf: date)
        out.append(contentsOf: server)
        appendStatic("\r\nX-Request-Id: ", to: &out)
        appendText(requestID, to: &out)
        out.append(13); out.append(10)
        if !keepAlive {
            appendStatic("Connection: close\r\n", to: &out)
        } else if http10 {
            appendStatic("Connection: keep-alive\r\n", to: &out)
        }
        out.append(13); out.append(10)
    }

    /// A literal's bytes, copied whole: appending a String's UTF-8 view went through
    /// the generic sequence path, one of the head's larger costs.
    private static func appendStatic(_ text: StaticString, to out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// A String's bytes, copied whole from its storage when it has one.
    private static func appendText(_ text: String, to out: inout [UInt8]) {
        if text.utf8.withContiguousStorageIfAvailable({ out.append(contentsOf: $0) }) == nil {
            out.append(contentsOf: Array(text.utf8))
        }
    }

    private static func isManaged(_ name: String) -> Bool {
        // Each managed name has a length of its own, so one comparison decides.
        let candidate: String
        switch name.utf8.count {
        case 4: candidate = "date"
        case 6: candidate = "server"
        case 10: candidate = "connection"
        case 12: candidate = "x-request-id"
        case 14: candidate = "content-length"
        case 17: candidate = "transfer-encoding"
        default: return false
        }
        return HTTPHeaders.equalNames(candidate, name)
    }

    /// Copies header text, turning CR, LF and NUL into spaces so that a
    /// handler's value can never split the response.
    private static func appendSafe(_ text: String, to out: inout [UInt8]) {
        // Copy whole, then patch: appending byte by byte was the serializer's largest cost.
        let start = out.count
        appendText(text, to: &out)
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
