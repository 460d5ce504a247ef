import Foundation
import Synchronization

/// Runs the built `ferry` executable as a subprocess, for end-to-end CLI tests.
public enum FerryProcess {
    /// What a run printed and how it exited.
    public struct Outcome: Sendable {
        public let status: Int32
        public let stdout: String
        public let stderr: String
    }

    /// The `ferry` binary that `swift build` put near the test bundle.
    public static var binary: URL {
        get throws { try executable(named: "ferry") }
    }

    /// An executable product of this package (`ferry`, `ferry-notes`) that
    /// `swift build` put near the test bundle.
    public static func executable(named name: String) throws -> URL {
        let testBinary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var directory = testBinary.deletingLastPathComponent()
        // The bundle may be a directory (FerryPackageTests.xctest/...); walk up to debug/.
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        throw TestEnvironment.Missing(
            description: "the \(name) executable was not found near \(testBinary.path); run `swift build` before `swift test`")
    }

    /// Runs `ferry arguments…` with extra environment variables and optional
    /// standard input. `FERRY_*` settings of the test process itself are not
    /// passed on, so a run sees only what the test gives it.
    public static func run(
        _ arguments: [String], environment: [String: String] = [:], input: String? = nil, in directory: String? = nil
    ) throws -> Outcome {
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("FERRY_") || $0.key.hasPrefix("FERRY_TEST_") }
        env.merge(environment) { $1 }
        // posix_spawn, not Foundation's Process: see SpawnedRun.
        let outcome = try SpawnedRun.run(
            executable: try binary.path, arguments: arguments, environment: env,
            directory: directory ?? TestEnvironment.repositoryRoot.path, input: input)
        return Outcome(
            status: outcome.status, stdout: String(decoding: outcome.stdout, as: UTF8.self),
            stderr: String(decoding: outcome.stderr, as: UTF8.self))
    }
}
