import FerryTestSupport
import Foundation
import Testing

/// The module edges docs/ARCHITECTURE.md §1 draws, checked against what
/// `Package.swift` declares (through `swift package dump-package`) and what
/// the sources import, so that CI refuses an undeclared import or a lower
/// layer that reaches up, instead of a reader finding it later.
@Suite struct ModuleEdgesTests {
    /// Modules every target may import without declaring them: the toolchain's.
    static let toolchainModules: Set<String> = [
        "Foundation", "FoundationNetworking", "FoundationEssentials", "Glibc", "Darwin", "Dispatch",
        "Synchronization", "Testing", "XCTest", "_Concurrency", "PackagePlugin",
        // Apple platforms' own (FerryKit's NetworkMonitor, under `#if canImport(Network)`).
        "Network",
    ]
    /// What a server module is; FerryKit may link none of them.
    static let serverModules: Set<String> = [
        "Ferry", "FerryBase", "FerryHTTP", "FerryPostgres", "FerryMemcached", "FerryMigrations", "FerryCoreMigrations",
        "CLibPQ", "CLibMemcached", "CEpoll", "CZlib", "CCurlFetch",
    ]

    struct Target {
        let name: String
        let kind: String
        /// Targets and products it depends on, by module name.
        let dependencies: Set<String>
        /// The `path:` Package.swift gives it, if any.
        let path: String?
        var directory: URL {
            if let path { return TestEnvironment.repositoryRoot.appendingPathComponent(path) }
            return TestEnvironment.repositoryRoot.appendingPathComponent(kind == "test" ? "Tests" : "Sources")
                .appendingPathComponent(name)
        }
        /// A target named `ferry-notes` is imported as `ferry_notes`.
        var moduleName: String { name.replacingOccurrences(of: "-", with: "_") }
    }

    static func manifest() throws -> [String: Target] {
        let scratch = try Subprocess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        // Its own scratch path: the running `swift test` holds the lock on .build.
        let dump = try Subprocess.run(
            [
                "swift", "package", "--package-path", TestEnvironment.repositoryRoot.path,
                "--scratch-path", scratch.path, "dump-package",
            ], discardingErrors: true)
        try #require(dump.status == 0, "swift package dump-package failed")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(dump.output.utf8)) as? [String: Any])
        let targets = try #require(json["targets"] as? [[String: Any]])
        var byName: [String: Target] = [:]
        for target in targets {
            let name = try #require(target["name"] as? String)
            let kind = try #require(target["type"] as? String)
            let dependencies = (target["dependencies"] as? [[String: Any]] ?? []).compactMap { dependency in
                // {"byName": [name, condition]}, {"target": [name, condition]}, {"product": [name, package, ...]}
                dependency.values.compactMap { ($0 as? [Any])?.first as? String }.first
            }
            byName[name] = Target(
                name: name, kind: kind, dependencies: Set(dependencies.map { $0.replacingOccurrences(of: "-", with: "_") }),
                path: target["path"] as? String)
        }
        return byName
    }

    /// Everything `name` links, directly or through other targets of this package.
    static func closure(of name: String, in targets: [String: Target]) -> Set<String> {
        var seen: Set<String> = []
        var queue = Array(targets[name]?.dependencies ?? [])
        while let next = queue.popLast() {
            guard seen.insert(next).inserted else { continue }
            let target = targets[next] ?? targets.values.first { $0.moduleName == next }
            queue.append(contentsOf: target?.dependencies ?? [])
        }
        return seen
    }

    /// The modules a target's sources import, each with a file that imports it.
    static func imports(of target: Target) throws -> [String: String] {
        let pattern = try NSRegularExpression(
            pattern:
                #"^\s*(?:@[A-Za-z_]+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|fileprivate|private)\s+)?import\s+(?:(?:struct|class|enum|protocol|typealias|func|var|let)\s+)?([A-Za-z_][A-Za-z0-9_]*)"#,
            options: [.anchorsMatchLines])
        var found: [String: String] = [:]
        let files = FileManager.default.enumerator(at: target.directory, includingPropertiesForKeys: nil)
        while let file = files?.nextObject() as? URL {
            guard file.pathExtension == "swift" else { continue }
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                guard let range = Range(match.range(at: 1), in: text) else { continue }
                found[String(text[range])] = file.lastPathComponent
            }
        }
        return found
    }

    @Test func everyImportIsDeclaredInPackageSwift() throws {
        let targets = try Self.manifest()
        #expect(targets.count > 20, "read the manifest")
        var checked = 0
        for target in targets.values where target.kind != "system" {
            let imported = try Self.imports(of: target)
            checked += imported.count
            for (module, file) in imported.sorted(by: { $0.key < $1.key })
            where !Self.toolchainModules.contains(module) && module != target.moduleName {
                #expect(
                    target.dependencies.contains(module),
                    "\(target.name) imports \(module) (\(file)) without declaring it in Package.swift")
            }
        }
        #expect(checked > 100, "found the sources' imports")
    }

    @Test func lowerLayersReachNoHigherOne() throws {
        let targets = try Self.manifest()
        let closure = { (name: String) in Self.closure(of: name, in: targets) }
        #expect(closure("FerryBase").isEmpty)
        #expect(closure("FerryRank").isEmpty)
        #expect(closure("FerryHTTP").isSubset(of: ["FerryBase", "CEpoll", "CZlib", "Logging"]), "\(closure("FerryHTTP"))")
        #expect(closure("FerryPostgres").isSubset(of: ["FerryBase", "CLibPQ"]), "\(closure("FerryPostgres"))")
        #expect(closure("FerryMemcached").isSubset(of: ["FerryBase", "CLibMemcached"]), "\(closure("FerryMemcached"))")
        // The JWKS fetch's C function links libcurl alone.
        #expect(closure("CCurlFetch").isEmpty)
        #expect(!closure("FerryMigrations").contains("Ferry"))
        // Ferry's own migrations are data: the module links nothing.
        #expect(closure("FerryCoreMigrations").isEmpty)
        // FerryHTTP and its tests build on a machine without libpq or libmemcached.
        for name in ["FerryHTTP", "FerryHTTPTestSupport", "FerryHTTPTests"] {
            #expect(
                closure(name).isDisjoint(with: ["CLibPQ", "CLibMemcached", "CCurlFetch", "FerryPostgres", "FerryMemcached", "Ferry"]),
                "\(name) links \(closure(name))")
        }
        // The client links no server module, so it builds for iOS and macOS.
        // FerryKit's unit tests too, so they run where FerryKit ships (issue 49).
        for name in ["FerryKit", "StudyModels", "ferry-notes", "FerryKitTestSupport", "FerryKitUnitTests"] {
            #expect(closure(name).isDisjoint(with: Self.serverModules), "\(name) links \(closure(name).intersection(Self.serverModules))")
        }
    }

    /// FerryHTTP is plain HTTP/1.1: the contract's words (problem codes, the
    /// `Server` name, thread names) come from Ferry through its configuration.
    @Test func ferryHTTPSaysNothingOfFerry() throws {
        let directory = TestEnvironment.repositoryRoot.appendingPathComponent("Sources/FerryHTTP")
        let files = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)
        var read = 0
        while let file = files?.nextObject() as? URL {
            guard file.pathExtension == "swift" else { continue }
            read += 1
            let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            for (number, line) in lines.enumerated() where line.lowercased().contains("ferry") && line != "import FerryBase" {
                Issue.record("\(file.lastPathComponent):\(number + 1): \(line)")
            }
        }
        #expect(read > 10)
    }
}
