import FerryHTTPTestSupport
import Foundation
import Glibc

/// A real server process (memcached, PgBouncer, nginx, `ferry serve`) owned by one
/// test: output goes to a log file in the test's directory, readiness is a TCP
/// connect, and `deinit` kills it so a failing test cannot leak it.
final class ServiceProcess: Sendable {
    let name: String
    let log: URL
    private let process = Process()

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Starts `executable` (a path, or a name looked up on PATH) and waits until `port` accepts.
    init(
        _ name: String, executable: String, _ arguments: [String], environment: [String: String]? = nil,
        port: Int, directory: URL, timeout: Double = 20
    ) throws {
        self.name = name
        log = directory.appendingPathComponent("\(name).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        if executable.hasPrefix("/") {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [executable] + arguments
        }
        if let environment { process.environment = environment }
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw Failure(description: "\(name): cannot run \(executable) (is it installed? deploy/local.sh install): \(error)")
        }
        let listening = eventually(within: timeout) { !process.isRunning || Self.accepts(port: port) } && process.isRunning
        if !listening {
            let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            stop(signal: SIGKILL)
            throw Failure(description: "\(name) did not listen on \(port):\n\(output)")
        }
    }

    deinit { stop(signal: SIGKILL) }

    var isRunning: Bool { process.isRunning }

    /// Sends `signal` and waits for the exit (SIGKILL after 15 s).
    func stop(signal: Int32 = SIGTERM) {
        guard process.isRunning else { return }
        kill(process.processIdentifier, signal)
        if !eventually(within: 15, every: 0.01, { !process.isRunning }) { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port`.
    static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }
}
