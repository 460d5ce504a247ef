#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// One plain-HTTP GET, for `ferry generate swift --from http://...`: the CLI
/// links no HTTP client (its binary is static, and Foundation's URLSession
/// would bring libcurl), and reading one document needs none. HTTPS is left
/// to curl: `curl -s URL/openapi.json | ferry generate swift --from -`.
enum PlainHTTP {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The body of `GET url` (its path, or `/openapi.json` when it has none).
    static func get(_ url: String, timeout: Int = 30) throws -> Data {
        guard url.hasPrefix("http://"), let parsed = URLComponents(string: url), let host = parsed.host, !host.isEmpty else {
            throw Failure(description: "only http:// URLs are read directly; for https, pipe curl's output into --from -")
        }
        let path =
            (parsed.percentEncodedPath.isEmpty || parsed.percentEncodedPath == "/" ? "/openapi.json" : parsed.percentEncodedPath)
            + (parsed.percentEncodedQuery.map { "?" + $0 } ?? "")
        let socket = try connect(host: host, port: parsed.port ?? 80, timeout: timeout)
        defer { close(socket) }
        let request = "GET \(path) HTTP/1.1\r\nHost: \(host)\r\nAccept: application/json\r\nConnection: close\r\n\r\n"
        var sent = 0
        let bytes = Array(request.utf8)
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw Failure(description: "the connection closed while sending") }
            sent += n
        }
        var response = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = recv(socket, &buffer, buffer.count, 0)
            if n == 0 { break }
            guard n > 0 else { throw Failure(description: "no answer within \(timeout) s") }
            response.append(contentsOf: buffer[0..<n])
            guard response.count < 64 << 20 else { throw Failure(description: "the answer is over 64 MiB") }
        }
        return try body(of: response, path: path)
    }

    static func connect(host: String, port: Int, timeout: Int) throws -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else {
            throw Failure(description: "cannot resolve \(host)")
        }
        defer { freeaddrinfo(list) }
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let address = next {
            let fd = socket(address.pointee.ai_family, address.pointee.ai_socktype, address.pointee.ai_protocol)
            if fd >= 0 {
                var wait = timeval(tv_sec: timeout, tv_usec: 0)
                setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
                setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
                #if canImport(Glibc)
                let connected = Glibc.connect(fd, address.pointee.ai_addr, address.pointee.ai_addrlen)
                #else
                let connected = Darwin.connect(fd, address.pointee.ai_addr, address.pointee.ai_addrlen)
                #endif
                if connected == 0 { return fd }
                close(fd)
            }
            next = address.pointee.ai_next
        }
        throw Failure(description: "cannot connect to \(host):\(port)")
    }

    /// The body of a whole HTTP/1.1 response, checked to be a 200.
    static func body(of response: Data, path: String) throws -> Data {
        guard let end = response.range(of: Data("\r\n\r\n".utf8)) else { throw Failure(description: "the answer has no complete head") }
        let head = String(decoding: response[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let status = head.first?.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        guard status == 200 else { throw Failure(description: "GET \(path) answered \(status == 0 ? "something that is not HTTP" : String(status))") }
        let body = Data(response[end.upperBound...])
        let chunked = head.dropFirst().contains { line in
            let parts = line.split(separator: ":", maxSplits: 1)
            return parts.count == 2 && parts[0].lowercased() == "transfer-encoding" && parts[1].lowercased().contains("chunked")
        }
        return chunked ? try dechunk(body) : body
    }

    static func dechunk(_ data: Data) throws -> Data {
        var out = Data()
        var rest = data[...]
        while let line = rest.range(of: Data("\r\n".utf8)) {
            let sizeText = String(decoding: rest[..<line.lowerBound], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else { throw Failure(description: "a bad chunk size") }
            if size == 0 { return out }
            let start = line.upperBound
            guard rest.distance(from: start, to: rest.endIndex) >= size + 2 else { throw Failure(description: "a cut chunk") }
            let end = rest.index(start, offsetBy: size)
            out.append(rest[start..<end])
            rest = rest[rest.index(end, offsetBy: 2)...]
        }
        throw Failure(description: "a chunked body without its last chunk")
    }
}
