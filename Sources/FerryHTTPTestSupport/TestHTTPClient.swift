import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A deliberately small, blocking HTTP/1.1 client over a real loopback socket,
/// for tests: the one every test target uses. It sends exactly the bytes asked
/// for, so tests can also send malformed requests, and it parses responses
/// strictly (an `HTTP/1.1` status line, header values as sent after the colon's
/// spaces, chunked or length-delimited or close-delimited bodies).
///
/// Two ways to use it: ``init(port:timeout:)`` connects on the first request and
/// reconnects after a `Connection: close` (tests of behaviour); ``init(connectingTo:host:timeout:)``
/// connects at once and never reconnects or closes on its own, so a wire test sees
/// what the server does with that one connection (``isClosedWithNothingMore()``).
public final class TestHTTPClient {
    /// One parsed response.
    public struct Response: Sendable {
        public let status: Int
        /// Header fields in order; names as sent.
        public let headers: [(name: String, value: String)]
        /// The body bytes (de-chunked).
        public let body: [UInt8]

        public init(status: Int, headers: [(name: String, value: String)], body: [UInt8]) {
            self.status = status
            self.headers = headers
            self.body = body
        }

        /// The first value of a header, case-insensitively.
        public func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }

        /// The body as UTF-8 text.
        public var text: String { String(decoding: body, as: UTF8.self) }

        /// The body parsed as JSON (nil when it is not JSON).
        public var json: Any? { try? JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed]) }

        /// The body as a JSON object, or an empty one.
        public var object: [String: Any] { json as? [String: Any] ?? [:] }
    }

    /// Why a request failed at the socket level.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    private var fd: Int32 = -1
    private var buffer: [UInt8] = []
    private let port: Int
    private let host: String
    /// Whether this client keeps its one connection (see the type's comment).
    private let pinned: Bool
    /// Seconds to wait for a response before failing.
    public var timeout: Double

    /// A client for `127.0.0.1:port`; connects lazily, and again after the server closes.
    public init(port: Int, timeout: Double = 30) {
        self.port = port
        self.timeout = timeout
        host = "127.0.0.1"
        pinned = false
    }

    /// A client connected now to `host` (an IPv4 or IPv6 literal), that keeps this one
    /// connection whatever the server says.
    public init(connectingTo port: Int, host: String = "127.0.0.1", timeout: Double = 5) throws {
        self.port = port
        self.host = host
        self.timeout = timeout
        pinned = true
        try connectIfNeeded()
    }

    deinit { close() }

    /// Closes the connection; the next request opens a new one.
    public func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
        buffer.removeAll()
    }

    /// Sends a request with a JSON or raw body and reads its response.
    @discardableResult
    public func request(
        _ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8]? = nil,
        json: Any? = nil
    ) throws -> Response {
        var headers = headers
        var payload = body
        if let json {
            payload = Array(try JSONSerialization.data(withJSONObject: json, options: [.fragmentsAllowed]))
            if !headers.contains(where: { $0.0.lowercased() == "content-type" }) {
                headers.append(("Content-Type", "application/json"))
            }
        }
        var head = "\(method) \(path) HTTP/1.1\r\nHost: localhost\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let payload { head += "Content-Length: \(payload.count)\r\n" }
        head += "\r\n"
        let bytes = Array(head.utf8) + (payload ?? [])
        let reused = fd >= 0
        try send(bytes)
        do {
            return try readResponse(method: method)
        } catch let failure as Failure
            where !pinned && reused && buffer.isEmpty && failure.description == Self.closedBeforeResponse
            && ["GET", "HEAD", "OPTIONS"].contains(method)
        {
            // RFC 9112 §9.3.1: a server may close an idle keep-alive connection
            // as a request goes out; a client retries a safe request once, on a
            // new connection. Said on stderr, so that a server closing
            // connections it should keep shows in the test log.
            FileHandle.standardError.write(
                Data("TestHTTPClient: port \(port) closed a kept-alive connection before answering \(method) \(path); retried once\n".utf8))
            close()
            try send(bytes)
            return try readResponse(method: method)
        }
    }

    static let closedBeforeResponse = "connection closed before a complete response"

    /// Sends text as its UTF-8 bytes, as it is.
    public func send(_ text: String) throws { try send(Array(text.utf8)) }

    /// Sends raw bytes as they are.
    public func send(_ bytes: [UInt8]) throws {
        if !pinned { try connectIfNeeded() }
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { throw Failure(description: "send failed: errno \(errno)") }
            offset += n
        }
    }

    /// Reads one response to a HEAD request (`head`, no body whatever its framing) or another.
    public func readResponse(head: Bool) throws -> Response {
        try readResponse(method: head ? "HEAD" : "GET")
    }

    /// Reads one response; `method` tells whether a body follows (HEAD has none).
    public func readResponse(method: String = "GET") throws -> Response {
        let (status, headers) = try readHead()
        let find = { (name: String) in headers.first { $0.name.lowercased() == name }?.value }
        var body: [UInt8] = []
        if method == "HEAD" || status == 204 || status == 304 || (100..<200).contains(status) {
            // no body
        } else if find("transfer-encoding")?.lowercased() == "chunked" {
            while let chunk = try readChunk() { body += chunk }
        } else if let length = find("content-length").flatMap({ Int($0) }) {
            try fill(length)
            body = Array(buffer[..<length])
            buffer.removeFirst(length)
        } else {
            while try readMore() {}
            body = buffer
            buffer.removeAll()
        }
        if !pinned, find("connection")?.lowercased() == "close" { close() }
        return Response(status: status, headers: headers, body: body)
    }

    /// Reads a response's status line and fields and leaves its body unread, for a
    /// streamed body read piece by piece with ``readChunk()`` or ``readSome()``.
    public func readStreamHead() throws -> Response {
        let (status, headers) = try readHead()
        return Response(status: status, headers: headers, body: [])
    }

    /// The next chunk of a chunked body as it arrives; nil at the last chunk.
    public func readChunk() throws -> [UInt8]? {
        let lineEnd = try readUntil([13, 10])
        let sizeText = String(decoding: buffer[..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
        buffer.removeFirst(lineEnd + 2)
        guard let size = Int(sizeText, radix: 16) else { throw Failure(description: "bad chunk size") }
        try fill(size + 2)
        let chunk = Array(buffer[..<size])
        buffer.removeFirst(size + 2)
        return size == 0 ? nil : chunk
    }

    /// Whatever body bytes have arrived (waiting for at least one); empty at the end of
    /// the stream. For a close-delimited body.
    public func readSome() throws -> [UInt8] {
        if buffer.isEmpty { _ = try readMore() }
        defer { buffer.removeAll() }
        return buffer
    }

    /// The status line and fields of the next response.
    private func readHead() throws -> (status: Int, headers: [(name: String, value: String)]) {
        let headEnd = try readUntil([13, 10, 13, 10])
        let headText = String(decoding: buffer[..<headEnd], as: UTF8.self)
        buffer.removeFirst(headEnd + 4)
        var lines = headText.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ", maxSplits: 2)
        guard statusLine.count >= 2, statusLine[0] == "HTTP/1.1", let status = Int(statusLine[1]) else {
            throw Failure(description: "bad status line: \(headText.prefix(80))")
        }
        var headers: [(name: String, value: String)] = []
        for line in lines {
            // Every line of the head is a field; a line without a colon is the server's bug.
            guard let colon = line.firstIndex(of: ":") else { throw Failure(description: "bad header line: \(line)") }
            // The spaces after the colon are not the value's; trailing ones are kept, as sent.
            headers.append((String(line[..<colon]), String(line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" })))
        }
        return (status, headers)
    }

    /// Whether the server closed the connection (EOF or reset) with nothing more to read:
    /// no smuggled second response after a refusal.
    public func isClosedWithNothingMore() -> Bool {
        guard buffer.isEmpty else { return false }
        do { return try !readMore() && buffer.isEmpty } catch { return false }
    }

    /// Ends this side's sending (a TCP half-close): the server reads end of input after
    /// what was sent, and may still answer.
    public func shutdownWrite() {
        if fd >= 0 { _ = Glibc.shutdown(fd, Int32(SHUT_WR)) }
    }

    /// Whether the server has sent something not read yet (or closed), without waiting.
    public func hasBytesWaiting() -> Bool {
        guard buffer.isEmpty, fd >= 0 else { return true }
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&poller, 1, 0) > 0
    }

    /// Bytes received and not read as a response (e.g. a smuggled second one).
    public var leftover: Int { buffer.count }

    /// Whether the server has closed the connection (reads EOF within `within` seconds).
    public func isClosedByPeer(within seconds: Double = 2) -> Bool {
        guard fd >= 0 else { return true }
        let saved = timeout
        timeout = seconds
        defer { timeout = saved }
        do {
            while try readMore() {}
            return true
        } catch {
            return false
        }
    }

    /// `connect(2)` to an IPv4 or IPv6 socket address.
    private func connect<Address>(to address: inout Address) -> Int32 {
        withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<Address>.size))
            }
        }
    }

    private func connectIfNeeded() throws {
        guard fd < 0 else { return }
        let family = host.contains(":") ? AF_INET6 : AF_INET
        fd = socket(family, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket failed: errno \(errno)") }
        let rc: Int32
        if family == AF_INET6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = in_port_t(UInt16(port).bigEndian)
            inet_pton(AF_INET6, host, &address.sin6_addr)
            rc = connect(to: &address)
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            inet_pton(AF_INET, host, &address.sin_addr)
            rc = connect(to: &address)
        }
        if rc != 0 {
            let code = errno
            close()
            throw Failure(description: "connect to \(host) port \(port) failed: errno \(code)")
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    private func readUntil(_ marker: [UInt8]) throws -> Int {
        var searchFrom = 0
        while true {
            if buffer.count >= marker.count {
                var i = searchFrom
                while i + marker.count <= buffer.count {
                    if buffer[i] == marker[0], Array(buffer[i..<(i + marker.count)]) == marker { return i }
                    i += 1
                }
                searchFrom = max(0, buffer.count - marker.count + 1)
            }
            guard try readMore() else { throw Failure(description: Self.closedBeforeResponse) }
        }
    }

    private func fill(_ count: Int) throws {
        while buffer.count < count {
            guard try readMore() else { throw Failure(description: "connection closed mid-body") }
        }
    }

    /// Reads what is available; false at EOF. Throws on timeout.
    private func readMore() throws -> Bool {
        guard fd >= 0 else { return false }
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&pfd, 1, Int32(timeout * 1000))
        if ready == 0 { throw Failure(description: "timed out after \(timeout) s waiting for the server") }
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n < 0 {
            if errno == ECONNRESET { return false }
            throw Failure(description: "recv failed: errno \(errno)")
        }
        if n == 0 { return false }
        buffer += chunk[..<n]
        return true
    }
}
