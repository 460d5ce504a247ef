import FerryHTTPTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The built `ferry serve` as a subprocess, for faults that only a real process
/// shows: a `kill -9`, a descriptor limit (`ulimit -n`), its own log lines.
///
/// Only the environment given here reaches it (no `FERRY_*` of the test
/// process), and it logs JSON to `logPath`, one file across restarts.
/// Owned by one test thread; other threads need only `port`.
public final class FerryServeProcess {
    /// The loopback port it listens on, the same across restarts.
    public let port: Int
    /// Where its standard output and error go.
    public let logPath: String
    private var environment: [String: String]
    private let descriptorLimit: Int?
    private var process: SpawnedProcess?

    /// Starts `ferry serve` on `databaseURL` and waits until `/healthz` answers.
    /// `settings` are more `FERRY_*` variables; `descriptorLimit` runs it under
    /// `ulimit -n`.
    public init(databaseURL: String, settings: [String: String] = [:], descriptorLimit: Int? = nil) throws {
        port = FreePort.next()
        logPath = NSTemporaryDirectory() + "ferry-serve-\(UUID().uuidString.prefix(8)).log"
        guard FileManager.default.createFile(atPath: logPath, contents: nil) else { throw TestError("cannot create \(logPath)") }
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("FERRY_") }
        environment["FERRY_DATABASE_URL"] = databaseURL
        environment["FERRY_LISTEN_HOST"] = "127.0.0.1"
        environment["FERRY_LISTEN_PORT"] = String(port)
        environment["FERRY_LISTEN_IO_THREADS"] = "2"
        environment["FERRY_LISTEN_WORKER_THREADS"] = "8"
        environment["FERRY_DATABASE_POOL_SIZE"] = "4"
        environment["FERRY_LOGGING_LEVEL"] = "warning"
        environment["FERRY_LOGGING_FORMAT"] = "json"
        if let memcached = try? TestEnvironment.memcached() { environment["FERRY_MEMCACHED_SERVERS"] = memcached }
        environment["FERRY_MEMCACHED_POLL_TIMEOUT_MS"] = String(TestEnvironment.memcachedPollTimeoutMs)
        environment.merge(settings) { $1 }
        self.environment = environment
        self.descriptorLimit = descriptorLimit
        try start()
    }

    deinit {
        kill()
        try? FileManager.default.removeItem(atPath: logPath)
    }

    /// The process id, while it runs.
    public var pid: Int32? { process.map(\.processIdentifier) }

    public var isRunning: Bool { process?.isRunning ?? false }

    /// Starts the process (again) and waits up to 30 s until `/healthz` answers 200.
    public func start() throws {
        let binary = try FerryProcess.binary.path
        let process: SpawnedProcess
        if let descriptorLimit {
            // exec: the pid is ferry's own, so a signal reaches it and not a shell. `${0}`: the
            // binary (bash's first argument after the script), braced apart from SQL's `$n`.
            process = try SpawnedProcess(
                executable: "/bin/bash", arguments: ["-c", "ulimit -n \(descriptorLimit) && exec \"${0}\" serve", binary],
                environment: environment, outputPath: logPath)
        } else {
            process = try SpawnedProcess(executable: binary, arguments: ["serve"], environment: environment, outputPath: logPath)
        }
        self.process = process
        let healthy = eventually(within: 30, every: 0.05) { !process.isRunning || Self.healthy(port: port) } && process.isRunning
        guard healthy else {
            kill()
            throw TestError("ferry serve did not become healthy on port \(port):\n\(logTail())")
        }
    }

    /// Adds or replaces `FERRY_*` variables for the next ``start()``: a
    /// restart with other settings, as a deploy that changes them.
    public func change(_ settings: [String: String]) {
        environment.merge(settings) { $1 }
    }

    /// SIGKILL, as a crash or the OOM killer would; waits until it is gone.
    public func kill() {
        guard let process else { return }
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        self.process = nil
    }

    /// SIGTERM (in-flight requests finish), then waits.
    public func stop() {
        guard let process else { return }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        self.process = nil
    }

    /// The log's lines so far.
    public func logLines() -> [String] {
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init)
    }

    /// The last 40 log lines, for failure messages.
    public func logTail() -> String { logLines().suffix(40).joined(separator: "\n") }

    /// Whether `GET /healthz` on a new connection answers 200.
    public static func healthy(port: Int) -> Bool {
        let client = TestHTTPClient(port: port, timeout: 2)
        defer { client.close() }
        return (try? client.request("GET", "/healthz", headers: [("Connection", "close")]))?.status == 200
    }
}
