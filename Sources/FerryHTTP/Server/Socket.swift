// The POSIX socket calls the server makes: `Socket` opens the listener, sets
// TCP_NODELAY and prints peer addresses; `DescriptorReserve` is the spare
// descriptor through which every accept goes, so that a server out of
// descriptors can still refuse new connections. Only a new connection passes
// through here; a kept-alive one does not.

import CEpoll
import FerryBase
import Glibc
import Synchronization

/// Thin wrappers over the POSIX socket calls the server needs.
enum Socket {
    /// A socket error with the failing call and errno.
    struct Failure: Error, CustomStringConvertible {
        let call: String
        let code: Int32
        var description: String { "\(call) failed: \(String(cString: strerror(code))) (errno \(code))" }
    }

    /// Opens a non-blocking listening socket on host:port; returns the fd and the bound port.
    static func listen(host: String, port: Int, backlog: Int32) throws -> (fd: Int32, port: Int) {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        var result: UnsafeMutablePointer<addrinfo>?
        let lookupHost = host == "localhost" ? "127.0.0.1" : host
        let rc = getaddrinfo(lookupHost.isEmpty ? nil : lookupHost, String(port), &hints, &result)
        guard rc == 0, let info = result else {
            throw Failure(call: "getaddrinfo(\(host))", code: rc == EAI_SYSTEM ? errno : EINVAL)
        }
        defer { freeaddrinfo(result) }
        let fd = socket(info.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(call: "socket", code: errno) }
        var one: Int32 = 1
        var zero: Int32 = 0
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        if info.pointee.ai_family == AF_INET6 {
            // "::" serves IPv4 clients too (mapped addresses).
            setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &zero, socklen_t(MemoryLayout<Int32>.size))
        }
        guard bind(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 else {
            let code = errno
            close(fd)
            throw Failure(call: "bind(\(host):\(port))", code: code)
        }
        guard Glibc.listen(fd, backlog) == 0 else {
            let code = errno
            close(fd)
            throw Failure(call: "listen", code: code)
        }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, address(of: storage).port)
    }

    /// A NUL-terminated C string in a buffer.
    private static func string(_ buffer: [CChar]) -> String {
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Disables Nagle so that small responses leave at once.
    static func setNoDelay(_ fd: Int32) {
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    /// The textual address and the port of a socket address.
    static func address(of storage: sockaddr_storage) -> (text: String, port: Int) {
        var storage = storage
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { sin in
                    var addr = sin.pointee.sin_addr
                    inet_ntop(AF_INET, &addr, &buffer, socklen_t(buffer.count))
                    return (Self.string(buffer), Int(UInt16(bigEndian: sin.pointee.sin_port)))
                }
            }
        case AF_INET6:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { sin6 in
                    var addr = sin6.pointee.sin6_addr
                    inet_ntop(AF_INET6, &addr, &buffer, socklen_t(buffer.count))
                    return ("[" + Self.string(buffer) + "]", Int(UInt16(bigEndian: sin6.pointee.sin6_port)))
                }
            }
        default:
            return ("unknown", 0)
        }
    }
}

/// What lets a server out of descriptors (EMFILE) refuse new connections
/// cleanly instead of leaving them in the listen backlog: one spare
/// descriptor, given up to accept-and-close a pending connection and taken
/// back at once.
///
/// Every accept of every loop goes through the same lock as the shedding.
/// Otherwise another loop's accept can take the descriptor the reserve just
/// freed; the reserve is then lost, nothing can be shed, and the backlog's
/// clients hang until some connection closes. A reserve lost anyway (a worker
/// opened a socket in between) is taken back at the next close.
final class DescriptorReserve: Sendable {
    private let reserve: Locked<Int32>
    private let missing = Atomic<Bool>(false)
    /// When exhaustion was last logged, in monotonic milliseconds, for all loops together.
    private let lastWarning = Atomic<Int>(-1_000_000)

    init() {
        reserve = Locked(open("/dev/null", O_RDONLY | O_CLOEXEC))
    }

    /// `accept4` on `listener`, serialised with ``shed(listener:)``.
    func accept(_ listener: Int32, _ address: UnsafeMutablePointer<sockaddr>?, _ length: UnsafeMutablePointer<socklen_t>?, flags: Int32) -> Int32 {
        reserve.withLock { _ in accept4(listener, address, length, flags) }
    }

    /// Accepts one pending connection and closes it, using the spare
    /// descriptor. False when there was no spare to use: the caller should
    /// stop watching the listener for a while instead of spinning on it.
    func shed(listener: Int32) -> Bool {
        reserve.withLock { reserve in
            if reserve < 0 { reserve = open("/dev/null", O_RDONLY | O_CLOEXEC) }
            guard reserve >= 0 else {
                missing.store(true, ordering: .relaxed)
                return false
            }
            Glibc.close(reserve)
            let fd = accept4(listener, nil, nil, Int32(SOCK_CLOEXEC.rawValue))
            if fd >= 0 { Glibc.close(fd) }
            reserve = open("/dev/null", O_RDONLY | O_CLOEXEC)
            missing.store(reserve < 0, ordering: .relaxed)
            return true
        }
    }

    /// After a descriptor was closed: takes the spare back if it was lost.
    func replenish() {
        guard missing.load(ordering: .relaxed) else { return }
        reserve.withLock { reserve in
            if reserve < 0 { reserve = open("/dev/null", O_RDONLY | O_CLOEXEC) }
            missing.store(reserve < 0, ordering: .relaxed)
        }
    }

    /// Whether to log the exhaustion now: at most once per `interval` seconds
    /// for the whole server, whichever loop meets it.
    func shouldWarn(now: Double, interval: Double = 5) -> Bool {
        let millis = Int(now * 1000)
        var last = lastWarning.load(ordering: .relaxed)
        while Double(millis - last) >= interval * 1000 {
            let (exchanged, original) = lastWarning.compareExchange(expected: last, desired: millis, ordering: .relaxed)
            if exchanged { return true }
            last = original
        }
        return false
    }

    /// Gives the spare up, at shutdown.
    func close() {
        reserve.withLock { reserve in
            if reserve >= 0 { Glibc.close(reserve) }
            reserve = -1
        }
    }
}
