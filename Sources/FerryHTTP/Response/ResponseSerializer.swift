// How a response head goes on the wire: `ResponseSerializer` writes the status
// line, the handler's fields and the ones the server owns (framing, `Date`,
// `Server`, `X-Request-Id`, `Connection`); `ResponseFraming` says how the body
// ends; `HTTPDate` keeps the `Date` value per loop and `HTTPDateFormat` writes
// HTTP-dates, for the server and for handlers' `Last-Modified`.

import Glibc

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
        var digits:
            (
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
            ) =
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

/// The IMF-fixdate for `Date`, formatted at most once per second.
///
/// Each I/O thread owns one, so no lock is needed.
struct HTTPDate {
    private(set) var bytes: [UInt8] = []
    private var second: Int = -1

    /// Reformats when the wall-clock second has changed.
    mutating func refresh() {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME_COARSE, &ts)
        let now = Int(ts.tv_sec)
        guard now != second else { return }
        second = now
        bytes = Array(HTTPDateFormat.format(epochSeconds: now).utf8)
    }
}

/// HTTP-dates (RFC 9110 §5.6.7): the server's `Date`, and a handler's
/// `Last-Modified` and `If-Modified-Since`.
public enum HTTPDateFormat {
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// IMF-fixdate of a millisecond timestamp (the second is rounded down).
    public static func format(milliseconds: Int64) -> String {
        format(epochSeconds: Int(milliseconds / 1000))
    }

    /// IMF-fixdate of seconds since the epoch: `Sun, 06 Nov 1994 08:49:37 GMT`.
    public static func format(epochSeconds: Int) -> String {
        var t = time_t(epochSeconds)
        var parts = tm()
        gmtime_r(&t, &parts)
        // Every GET writes a Last-Modified: bytes into one buffer, no interpolation.
        return String(unsafeUninitializedCapacity: 29) { out in
            var at = 0
            func put(_ text: String) { for byte in text.utf8 { out[at] = byte; at += 1 } }
            func digits(_ value: Int32, _ count: Int) {
                var divisor: Int32 = 1
                for _ in 1..<count { divisor *= 10 }
                while divisor > 0 {
                    out[at] = UInt8(48 + (value / divisor) % 10)
                    at += 1
                    divisor /= 10
                }
            }
            put(days[Int(parts.tm_wday)]); put(", ")
            digits(parts.tm_mday, 2); put(" ")
            put(months[Int(parts.tm_mon)]); put(" ")
            digits(parts.tm_year + 1900, 4); put(" ")
            digits(parts.tm_hour, 2); put(":")
            digits(parts.tm_min, 2); put(":")
            digits(parts.tm_sec, 2); put(" GMT")
            return at
        }
    }

    /// Seconds since the epoch of an IMF-fixdate; nil for anything else (an
    /// invalid `If-Modified-Since` is ignored, RFC 9110 §13.1.3).
    public static func parse(_ value: String) -> Int64? {
        let parts = value.split(separator: " ")
        guard parts.count == 6, parts[5] == "GMT", parts[0].hasSuffix(","),
            let day = Int32(parts[1]), let month = months.firstIndex(of: String(parts[2])), let year = Int32(parts[3])
        else { return nil }
        let time = parts[4].split(separator: ":")
        guard time.count == 3, let h = Int32(time[0]), let m = Int32(time[1]), let s = Int32(time[2]),
            (1...31).contains(day), (0...23).contains(h), (0...59).contains(m), (0...60).contains(s)
        else { return nil }
        var parts2 = tm()
        parts2.tm_year = year - 1900
        parts2.tm_mon = Int32(month)
        parts2.tm_mday = day
        parts2.tm_hour = h
        parts2.tm_min = m
        parts2.tm_sec = s
        return Int64(timegm(&parts2))
    }
}
