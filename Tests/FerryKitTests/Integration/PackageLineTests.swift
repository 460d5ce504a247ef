import FerryTestSupport
import Foundation
import Testing

/// The package line the README and CHANGELOG.md give an app is one that resolves
/// (issue 48: examples/swift-app said `<owner>` and `from: "1.0.0"`, though `ferry
/// version` said 0.1.0 and no URL existed): the same path-based form
/// examples/swift-app uses, which SwiftPM loads against this checkout here and
/// OutsidePackageTests builds; and the CHANGELOG's newest release is `ferry version`'s.
@Suite struct PackageLineTests {
    static let root = TestEnvironment.repositoryRoot

    static func read(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// The `.package(...)` lines naming Ferry in `text`.
    static func ferryLines(_ text: String) -> [String] {
        text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { $0.hasPrefix(".package(") && $0.contains("\"Ferry\"") }
    }

    @Test func theDocumentedPackageLineIsTheOneTheExampleResolves() throws {
        let example = Self.ferryLines(try Self.read("examples/swift-app/Package.swift"))
        #expect(example == [#".package(name: "Ferry", path: "../.."),"#], "\(example)")
        for document in ["README.md", "CHANGELOG.md"] {
            let lines = Self.ferryLines(try Self.read(document))
            #expect(!lines.isEmpty, "\(document) gives no package line")
            for line in lines {
                #expect(line.hasPrefix(#".package(name: "Ferry", path: ""#), "\(document): \(line)")
                #expect(!line.contains("url:") && !line.contains("<owner>"), "\(document): \(line)")
            }
        }
        // SwiftPM reads the example's manifest, its path dependency being this checkout.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swift", "package", "dump-package", "--package-path", Self.root.appendingPathComponent("examples/swift-app").path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let json = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "swift package dump-package failed on examples/swift-app")
        let manifest = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        let paths = (manifest["dependencies"] as? [[String: Any]] ?? []).compactMap { dependency -> String? in
            ((dependency["fileSystem"] as? [[String: Any]])?.first?["path"] as? String)
        }
        #expect(paths.map { URL(fileURLWithPath: $0).standardizedFileURL.path } == [Self.root.standardizedFileURL.path], "\(paths)")
    }

    @Test func theChangelogsNewestReleaseIsFerrysVersion() throws {
        let changelog = try Self.read("CHANGELOG.md")
        #expect(changelog.contains("\n## [Unreleased]\n"), "entries go under [Unreleased] until a release")
        let releases = changelog.split(separator: "\n").filter { $0.hasPrefix("## [") && !$0.hasPrefix("## [Unreleased]") }
        let version = try FerryProcess.run(["version"])
        try #require(version.status == 0, "\(version.stderr)")
        let current = version.stdout.split(separator: "\n").first.map { String($0.dropFirst("ferry ".count)) } ?? ""
        #expect(releases.first.map(String.init) == "## [\(current)]", "ferry version says \(current); CHANGELOG.md: \(releases)")
        let flag = try FerryProcess.run(["--version"])
        #expect(flag.status == 0 && flag.stdout == "\(current)\n", "ferry --version: \(flag.status) \(flag.stdout) \(flag.stderr)")
    }
}
