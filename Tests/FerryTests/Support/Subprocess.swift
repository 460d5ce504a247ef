import Foundation

/// Runs a tool found on PATH and captures its output, for tests that check
/// Ferry's artefacts with the real validators (openapi-spec-validator, systemd-analyze).
struct Subprocess {
    let status: Int32
    let output: String

    struct NotFound: Error, CustomStringConvertible {
        let description: String
    }

    /// Runs `arguments[0]` through `/usr/bin/env`, so PATH decides which tool runs.
    /// `output` holds standard output and standard error together, or only
    /// standard output with `discardingErrors` (for output that is parsed).
    static func run(_ arguments: [String], discardingErrors: Bool = false) throws -> Subprocess {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = discardingErrors ? FileHandle.nullDevice : pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Subprocess(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }

    /// A fresh temporary directory for one test.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-ops-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
