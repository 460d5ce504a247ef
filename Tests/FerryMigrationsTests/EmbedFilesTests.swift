import FerryTestSupport
import Foundation
import Testing
@testable import FerryMigrations

/// The EmbedFiles plugin and its tool: what is built in is every byte of every file.
@Suite struct EmbedFilesTests {
    /// Ferry's own migrations as built into the binary are exactly the files of
    /// `migrations/`: the same names, in version order, with the same bytes.
    @Test func theBuiltInCoreMigrationsAreTheFilesOfMigrations() throws {
        let directory = TestEnvironment.repositoryRoot.appendingPathComponent("migrations")
        // The versioned files: schema.snapshot.sql beside them is for review, not built in.
        let onDisk = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
            .filter { MigrationFile.version(ofFileName: $0) != nil }
            .map { try MigrationFile(fileName: $0, path: $0, contents: Data(contentsOf: directory.appendingPathComponent($0))) }
        let builtIn = try MigrationFile.core()
        #expect(builtIn.map(\.fileName) == onDisk.map(\.fileName))
        #expect(builtIn.map(\.checksum) == onDisk.map(\.checksum), "rebuild: swift build embeds migrations/ anew")
        #expect(builtIn.first?.fileName == "0001_ferry_core.sql")
    }

    /// So are the repeatable ones, the files of `migrations/functions`.
    @Test func theBuiltInRepeatableFilesAreTheFilesOfMigrationsFunctions() throws {
        let directory = TestEnvironment.repositoryRoot.appendingPathComponent("migrations/functions")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".sql") }.sorted()
        let builtIn = try RepeatableFile.core()
        #expect(builtIn.map(\.name) == names.map { "functions/\($0)" })
        for file in builtIn {
            let bytes = try Data(contentsOf: directory.appendingPathComponent(String(file.name.dropFirst("functions/".count))))
            #expect(file.checksum == MigrationFile.checksum(of: bytes), "rebuild: swift build embeds \(file.name) anew")
        }
    }

    /// Bytes a string literal could mangle (line endings, a byte-order mark, quotes,
    /// backslashes, interpolation, NUL, text that is not UTF-8) come back exactly: the
    /// tool's output, compiled with a line that prints each file's bytes, prints them.
    @Test func everyByteSurvivesTheTripThroughSwiftSource() throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-embed-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work.appendingPathComponent("in/sub"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let files: [(String, [UInt8])] = [
            ("a.txt", Array("line\r\nnext\rlast\n\t\"quoted\" \\(x) \\ \"\"\" #\"raw\"# é 🚀 \u{301}".utf8)),
            ("bom.sql", [0xEF, 0xBB, 0xBF] + Array("SELECT 1;".utf8)),
            ("sub/binary.bin", [0, 1, 2, 0xFF, 0xFE, 0x80, 0x0A, 0x22, 0x5C] + Array(0...255)),
            ("empty.txt", []),
        ]
        for (name, bytes) in files {
            try Data(bytes).write(to: work.appendingPathComponent("in").appendingPathComponent(name))
        }
        let generated = work.appendingPathComponent("Embedded.swift")
        let tool = try run(
            FerryProcess.executable(named: "ferry-embed").path,
            [
                generated.path, "Fixture", "internal", "in", work.appendingPathComponent("in").path,
            ] + files.map(\.0).sorted())
        try #require(tool.status == 0, "\(tool.output)")
        try "for (name, bytes) in Fixture.files { print(name, bytes.map { String($0) }.joined(separator: \",\")) }\n"
            .write(to: work.appendingPathComponent("main.swift"), atomically: true, encoding: .utf8)
        let binary = work.appendingPathComponent("roundtrip").path
        let compile = try run("/usr/bin/env", ["swiftc", "-o", binary, generated.path, work.appendingPathComponent("main.swift").path])
        try #require(compile.status == 0, "\(compile.output)")
        let printed = try run(binary, [])
        #expect(
            printed.output
                == files.sorted { $0.0 < $1.0 }
                .map { "\($0.0) \($0.1.map { String($0) }.joined(separator: ","))\n" }.joined())
    }

    private func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
