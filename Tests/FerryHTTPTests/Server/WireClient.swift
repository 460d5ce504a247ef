import Glibc
import Testing

/// A blocking loopback client that speaks raw HTTP/1.1 bytes, so tests see
/// exactly what the server puts on the wire.
final class WireClient {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let fd: Int32
    private var buffer: [UInt8] = []

    init(port: Int, host: String = "127.0.0.1", timeoutSeconds: Int = 5) throws {
        let family = host.contains(":") ? AF_INET6 : AF_INET
        fd = socket(family, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let rc: Int32
        if family == AF_INET6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = in_port_t(UInt16(port).bigEndian)
            inet_pton(AF_INET6, host, &address.sin6_addr)
            rc = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            inet_pton(AF_INET, host, &address.sin_addr)
            rc = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        guard rc == 0 else {
            let code = errno
            Glibc.close(fd)
            throw Failure(description: "connect to \(host):\(port): errno \(code)")
        }
    }

    deinit { Glibc.close(fd) }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw Failure(description: "send: errno \(errno)") }
            offset += n
        }
    }

    /// Reads more bytes; false on EOF, throws on timeout or error.
    @discardableResult
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n > 0 {
            buffer.append(contentsOf: chunk[0..<n])
            return true
        }
        if n == 0 { return false }
        if errno == EAGAIN || errno == EWOULDBLOCK { throw Failure(description: "read timed out") }
        if errno == ECONNRESET { return false }
        throw Failure(description: "recv: errno \(errno)")
    }

    private func take(_ count: Int) -> [UInt8] {
        let out = Array(buffer[0..<count])
        buffer.removeFirst(count)
        return out
    }

    private func readLine() throws -> String {
        while true {
            if let i = indexOfCRLF() {
                let line = take(i)
                buffer.removeFirst(2)
                return String(decoding: line, as: UTF8.self)
            }
            guard try fill() else { throw Failure(description: "connection closed mid-line") }
        }
    }

    private func indexOfCRLF() -> Int? {
        guard buffer.count >= 2 else { return nil }
        for i in 0..<(buffer.count - 1) where buffer[i] == 13 && buffer[i + 1] == 10 { return i }
        return nil
    }

    /// Reads one response; `head` means a response to HEAD (no body whatever its framing).
    func readResponse(head: Bool = false) throws -> WireResponse {
        if buffer.isEmpty { guard try fill() else { throw Failure(description: "connection closed before a response") } }
        let statusLine = try readLine()
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0] == "HTTP/1.1", let status = Int(parts[1]) else {
            throw Failure(description: "bad status line: \(statusLine)")
        }
        var headers: [(String, String)] = []
        while true {
            let line = try readLine()
            if line.isEmpty { break }
            guard let colon = line.firstIndex(of: ":") else { throw Failure(description: "bad header: \(line)") }
            let value = line[line.index(after: colon)...].drop { $0 == " " }
            headers.append((String(line[..<colon]), String(value)))
        }
        var response = WireResponse(status: status, headers: headers, body: [])
        if head || status < 200 || status == 204 || status == 304 { return response }
        if let length = response.header("Content-Length").flatMap({ Int($0) }) {
            while buffer.count < length { guard try fill() else { throw Failure(description: "closed mid-body") } }
            response.body = take(length)
        } else if response.header("Transfer-Encoding") == "chunked" {
            while true {
                let sizeLine = try readLine()
                guard let size = Int(sizeLine, radix: 16) else { throw Failure(description: "bad chunk size \(sizeLine)") }
                if size == 0 {
                    _ = try readLine()
                    break
                }
                while buffer.count < size + 2 { guard try fill() else { throw Failure(description: "closed mid-chunk") } }
                response.body += take(size)
                buffer.removeFirst(2)
            }
        } else {
            while try fill() {}
            response.body = take(buffer.count)
        }
        return response
    }

    /// Whether the server closed the connection (EOF or reset) with nothing more to read.
    func isClosedWithNothingMore() -> Bool {
        if !buffer.isEmpty { return false }
        do { return try !fill() && buffer.isEmpty } catch { return false }
    }

    /// Bytes left unread in the buffer (e.g. a smuggled second response).
    var leftover: Int { buffer.count }
}

struct WireResponse {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    var text: String { String(decoding: body, as: UTF8.self) }
}
