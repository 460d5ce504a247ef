import Foundation
import Synchronization

/// The built `ferry` executable, run as a subprocess.
///
/// `swift build --build-tests` (which deploy/test.sh runs) puts it next to the test bundle
/// in `.build/<triple>/debug/`.
enum FerryBinary {
    /// Output and exit status of one run.
    struct Outcome: Sendable {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// The executable's path, or an error saying how to build it.
    static func path() throws -> String {
        let testBinary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var directory = testBinary.deletingLastPathComponent()
        // The bundle may be a directory (FerryPackageTests.xctest/...); walk up to debug/.
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("ferry").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        throw TestSetupError("the ferry executable was not found near \(testBinary.path); run `swift build` before `swift test`")
    }

    /// Runs `ferry` with `arguments`, adding `environment` to the test's own.
    static func run(_ arguments: [String], environment: [String: String] = [:], in directory: String? = nil) throws -> Outcome {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try path())
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Read both pipes before waiting, so a full pipe cannot block the child.
        let errData = Mutex<Data>(Data())
        let reader = Thread { errData.withLock { $0 = err.fileHandleForReading.readDataToEndOfFile() } }
        reader.start()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        while reader.isExecuting || !reader.isFinished { Thread.sleep(forTimeInterval: 0.005) }
        return Outcome(
            status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData.withLock { $0 }, as: UTF8.self))
    }
}
