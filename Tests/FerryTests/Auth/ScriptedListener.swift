import FerryBase
import FerryTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A loopback TCP listener that plays an identity provider's worst wire
/// behaviour, which Ferry's own HTTP server never does: accepting connections
/// into its backlog and never answering (`answer` nil), or answering every
/// request with `answer`'s raw bytes and closing (a body without
/// Content-Length, read to the close).
final class ScriptedListener: Sendable {
    let port: UInt16
    private let fd: Int32
    private let stopped = Locked(false)
    private let done = DispatchGroup()

    init(answer: [UInt8]?) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestError("socket() failed: \(errno)") }
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw TestError("bind/listen failed: \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.fd = fd
        self.port = UInt16(bigEndian: address.sin_port)
        guard let answer else { return }
        done.enter()
        let stopped = stopped
        let group = done
        Thread.detachNewThread {
            defer { group.leave() }
            while !stopped.withLock({ $0 }) {
                let client = accept(fd, nil, nil)
                if client < 0 { return }
                Self.readRequest(client)
                var sent = 0
                while sent < answer.count {
                    let n = answer[sent...].withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    if n <= 0 { break }
                    sent += n
                }
                close(client)
            }
        }
    }

    /// Reads up to the end of the request's head.
    private static func readRequest(_ client: Int32) {
        var head: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !head.suffix(4).elementsEqual(Array("\r\n\r\n".utf8)) {
            let n = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            if n <= 0 { return }
            head += buffer[..<n]
        }
    }

    var url: URL { URL(string: "http://127.0.0.1:\(port)/jwks.json")! }

    /// Closes the listener and waits for its thread, if any.
    func stop() {
        stopped.withLock { $0 = true }
        shutdown(fd, Int32(SHUT_RDWR))
        done.wait()
        close(fd)
    }
}
