import FerryTestSupport
import Foundation
import Testing

/// The test that FerryKit's public API is enough: `examples/swift-app`, a
/// package of its own that depends on Ferry by path, is built as any app
/// would build it and run against a real `ferry serve`. Its build goes to
/// `.build/examples/swift-app`, so a second run only relinks.
@Suite struct OutsidePackageTests {
    /// Runs `arguments`, returning the exit status and what it printed; fails
    /// the test past `timeout` seconds.
    static func run(_ arguments: [String], environment: [String: String] = [:], timeout: Double) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.currentDirectoryURL = TestEnvironment.repositoryRoot
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("outside-package-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: log) }
        let handle = try FileHandle(forWritingTo: log)
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        let deadline = Date().addingTimeInterval(timeout)
        // A real wait: a child process, polled until it exits or its time is up.
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try handle.close()
        let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return (process.isRunning ? -1 : process.terminationStatus, output)
    }

    @Test func anAppOutsideTheRepositoryBuildsAndSyncsWithThePublicAPIOnly() async throws {
        let scratch = TestEnvironment.repositoryRoot.appendingPathComponent(".build/examples/swift-app").path
        let started = Date()
        let build = try Self.run(["swift", "build", "--package-path", "examples/swift-app", "--scratch-path", scratch], timeout: 1_200)
        try #require(build.status == 0, "examples/swift-app did not build:\n\(build.output.suffix(4_000))")
        print("ferrykit: examples/swift-app built in \(String(format: "%.1f", Date().timeIntervalSince(started))) s")

        let server = try FerryServer()
        defer { server.stop() }
        _ = try await server.user("app")
        let app = try Self.run(
            ["\(scratch)/debug/swift-app"],
            environment: ["FERRY_SERVER": server.baseURL.absoluteString, "FERRY_USER": "app", "FERRY_PASSWORD": "secret-app"],
            timeout: 180)
        #expect(app.status == 0 && app.output.contains("swift-app: ok"), "\(app.output)")
    }
}
