import FerryHTTPTestSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A real `memcached` on a free loopback port, owned by one test. It is killed in
/// `deinit`, so a failing test cannot leak it.
public final class MemcachedProcess: @unchecked Sendable {
    // @unchecked: a test owns its process object and only touches it from its own task.
    public let port: UInt16
    private var process: Process?
    private let itemSizeLimit: String?

    /// `"127.0.0.1:port"`.
    public var address: String { "127.0.0.1:\(port)" }

    /// Starts memcached on a free port; `port` reuses a given one (for restarts).
    public init(port: UInt16? = nil, itemSizeLimit: String? = nil) throws {
        self.itemSizeLimit = itemSizeLimit
        var lastError: Error = TestError("memcached did not start")
        for _ in 0..<5 {
            let candidate = try port ?? freeLoopbackPort()
            do {
                process = try Self.launch(port: candidate, itemSizeLimit: itemSizeLimit)
                self.port = candidate
                return
            } catch {
                lastError = error
                if port != nil { break }
            }
        }
        throw lastError
    }

    deinit { kill() }

    /// Stops the server at once (SIGKILL), as a crash would.
    public func kill() {
        guard let process else { return }
        if process.isRunning {
            Glibc.kill(process.processIdentifier, SIGCONT)
            Glibc.kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
        self.process = nil
    }

    /// Starts a new, empty memcached on the same port.
    public func restart() throws {
        kill()
        var lastError: Error = TestError("restart failed")
        // The port may take a moment to be free again.
        let launched = eventually(within: 5, every: 0.05) {
            do {
                process = try Self.launch(port: port, itemSizeLimit: itemSizeLimit)
                return true
            } catch {
                lastError = error
                return false
            }
        }
        if !launched { throw lastError }
    }

    /// Freezes the process: its kernel still accepts connections, it never answers.
    /// Returns once every thread is really stopped (SIGSTOP takes effect asynchronously).
    public func pause() {
        guard let process else { return }
        let pid = process.processIdentifier
        Glibc.kill(pid, SIGSTOP)
        // Not thrown: a test that needs it stopped sees it answer, and fails on that.
        _ = eventually(within: 2, every: 0.001) { Self.allThreadsStopped(pid) }
    }

    private static func allThreadsStopped(_ pid: Int32) -> Bool {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return !tasks.isEmpty
            && tasks.allSatisfy { task in
                guard let stat = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/stat", encoding: .utf8),
                    let close = stat.lastIndex(of: ")")
                else { return false }
                // The state letter follows "pid (comm) ".
                let state = stat[stat.index(after: close)...].dropFirst().first
                return state == "T" || state == "t"
            }
    }
    /// Lets a paused process run again.
    public func resume() { if let process { Glibc.kill(process.processIdentifier, SIGCONT) } }

    private static func launch(port: UInt16, itemSizeLimit: String?) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/memcached")
        var arguments = ["-l", "127.0.0.1", "-p", String(port), "-U", "0", "-m", "64", "-t", "2"]
        if getuid() == 0 { arguments += ["-u", "nobody"] }
        if let itemSizeLimit { arguments += ["-I", itemSizeLimit] }
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        _ = eventually(within: 3, every: 0.01) { !process.isRunning || canConnect(port: port) }
        if !process.isRunning {
            throw TestError("memcached exited with \(process.terminationStatus) on port \(port)")
        }
        if canConnect(port: port) { return process }
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        throw TestError("memcached on port \(port) did not accept connections within 3 s")
    }
}

/// A failure of the test scaffolding itself.
public struct TestError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
