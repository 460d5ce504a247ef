import Foundation

/// Runs the built `ferry` executable as a subprocess, for end-to-end CLI tests.
public enum FerryProcess {
    /// What a run printed and how it exited.
    public struct Outcome: Sendable {
        /// The exit status.
        public let status: Int32
        /// Standard output.
        public let output: String
        /// Standard error.
        public let error: String
    }

    /// The `ferry` binary beside the test bundle (`swift build` puts both in one directory).
    public static var binary: URL {
        let besideTests = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("ferry")
        if FileManager.default.isExecutableFile(atPath: besideTests.path) { return besideTests }
        return TestEnvironment.repositoryRoot.appendingPathComponent(".build/debug/ferry")
    }

    /// Runs `ferry arguments…` with extra environment variables and optional standard input.
    public static func run(_ arguments: [String], environment: [String: String] = [:], input: String? = nil) throws -> Outcome {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.currentDirectoryURL = TestEnvironment.repositoryRoot
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("FERRY_") || $0.key.hasPrefix("FERRY_TEST_") }
        env.merge(environment) { $1 }
        process.environment = env
        let stdout = Pipe(), stderr = Pipe(), stdin = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = stdin
        try process.run()
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try stdin.fileHandleForWriting.close()
        let out = stdout.fileHandleForReading.readDataToEndOfFile()
        let err = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Outcome(status: process.terminationStatus, output: String(decoding: out, as: UTF8.self),
                       error: String(decoding: err, as: UTF8.self))
    }
}
