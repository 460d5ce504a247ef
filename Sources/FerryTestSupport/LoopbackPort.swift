#if canImport(Glibc)
import Glibc
#endif

/// A free loopback port, in the width memcached's tests use.
public func freeLoopbackPort() throws -> UInt16 {
    let port = FreePort.next()
    guard port > 0 else { throw TestError("no free loopback port: errno \(errno)") }
    return UInt16(port)
}

/// Whether something accepts TCP connections on 127.0.0.1:`port`.
public func canConnect(port: UInt16) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = loopback(port: port)
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
        }
    }
}

/// `127.0.0.1:port` as a socket address.
public func loopback(port: UInt16) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return address
}
