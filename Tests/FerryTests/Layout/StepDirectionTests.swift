import FerryTestSupport
import Foundation
import Testing

/// The one order of the folders of `Sources/Ferry` and of `Sources/FerryHTTP`
/// (docs/ARCHITECTURE.md, "One direction"): each folder may use the types of
/// the folders before it and none after it. Inside `Ferry` a request's steps
/// keep their order (Actions → Planning → Execution → Response → Routing), the
/// vocabulary they share comes first, the features that compose them after,
/// and the leaves (Console, OpenAPI, Check) last, named by App alone.
///
/// A test rather than one target per folder: the steps call each other on every
/// request, and a module boundary there would cost cross-module calls (no
/// inlining or specialisation without `@inlinable`) for a rule a scan can hold.
/// The scan reads each folder's top-level type declarations, then every
/// identifier in the earlier folders' code (comments and string literals
/// left out); one that names a later folder's type is an upward use.
@Suite struct StepDirectionTests {
    /// The folders of `Sources/Ferry`, lowest first.
    static let order = [
        "Logging", "Config", "Problems", "Metrics", "SQL", "Schema", "Auth", "Scope", "Paging",
        "Actions", "Planning", "Execution", "Response", "Middleware",
        "Sync", "Ranks", "Idempotency", "Batch", "Accounts", "Routing",
        "Console", "OpenAPI", "Check", "App",
    ]
    /// The folders of `Sources/FerryHTTP`, lowest first.
    static let httpOrder = ["Core", "Parser", "Coding", "Response", "Server", "Router"]

    /// A type of a later folder named in an earlier one.
    struct UpwardUse: Equatable, CustomStringConvertible {
        let file: String
        let line: Int
        let name: String
        let declaredIn: String
        var description: String { "\(file):\(line) uses \(name), which \(declaredIn)/ declares" }
    }

    /// A source file's name and text.
    typealias Source = (name: String, text: String)

    /// Every upward use in `folders` (folder → its files), in `order`.
    static func upwardUses(_ folders: [String: [Source]], order: [String] = StepDirectionTests.order) -> [UpwardUse] {
        var declaredIn: [String: String] = [:]
        for folder in order {
            for source in folders[folder] ?? [] {
                for name in declarations(source.text) { declaredIn[name] = folder }
            }
        }
        var uses: [UpwardUse] = []
        for (rank, folder) in order.enumerated() {
            let later = Set(order[(rank + 1)...])
            for source in folders[folder] ?? [] {
                for (number, line) in code(source.text).enumerated() {
                    for word in identifiers(line) {
                        guard let home = declaredIn[word], later.contains(home) else { continue }
                        uses.append(UpwardUse(file: "\(folder)/\(source.name)", line: number + 1, name: word, declaredIn: home))
                    }
                }
            }
        }
        return uses
    }

    /// The names of the types a file declares at its top level.
    static func declarations(_ text: String) -> [String] {
        let kinds: Set<Substring> = ["struct", "enum", "class", "actor", "protocol", "typealias"]
        let modifiers: Set<Substring> = ["public", "package", "internal", "private", "fileprivate", "final", "indirect"]
        return code(text).compactMap { line in
            guard let first = line.first, first.isLetter || first == "@" else { return nil }
            let words = line.split(whereSeparator: { !$0.isLetter && !$0.isNumber && $0 != "_" && $0 != "@" })
            var index = 0
            while index < words.count, words[index].hasPrefix("@") || modifiers.contains(words[index]) { index += 1 }
            guard index + 1 < words.count, kinds.contains(words[index]) else { return nil }
            return String(words[index + 1])
        }
    }

    /// The file's lines with comments and string literals blanked, line numbers kept.
    static func code(_ text: String) -> [String] {
        var lines: [String] = []
        var current = ""
        var inBlock = 0, inMultiline = false
        let characters = Array(text)
        var index = 0
        func peek(_ offset: Int) -> Character? { index + offset < characters.count ? characters[index + offset] : nil }
        while index < characters.count {
            let character = characters[index]
            if character == "\n" {
                lines.append(current)
                current = ""
                index += 1
                continue
            }
            if inBlock > 0 {
                if character == "*", peek(1) == "/" {
                    inBlock -= 1; index += 2
                } else if character == "/", peek(1) == "*" {
                    inBlock += 1; index += 2
                } else {
                    index += 1
                }
                continue
            }
            if inMultiline {
                if character == "\"", peek(1) == "\"", peek(2) == "\"" { inMultiline = false; index += 3 } else { index += 1 }
                continue
            }
            if character == "/", peek(1) == "/" {
                while index < characters.count, characters[index] != "\n" { index += 1 }
                continue
            }
            if character == "/", peek(1) == "*" { inBlock = 1; index += 2; continue }
            if character == "\"" {
                if peek(1) == "\"", peek(2) == "\"" { inMultiline = true; index += 3; continue }
                index += 1
                while index < characters.count, characters[index] != "\"", characters[index] != "\n" {
                    index += characters[index] == "\\" ? 2 : 1
                }
                index += 1
                current += "\"\""
                continue
            }
            current.append(character)
            index += 1
        }
        lines.append(current)
        return lines
    }

    /// The identifiers on a line of code.
    static func identifiers(_ line: String) -> [String] {
        line.split(whereSeparator: { !$0.isLetter && !$0.isNumber && $0 != "_" }).map(String.init).filter { $0.first?.isLetter == true }
    }

    /// A module's folders as they are on disk, each with every Swift file
    /// under it (`Auth/JWT/…` is Auth's), and the files outside any folder.
    static func sources(_ module: String) throws -> (folders: [String: [Source]], loose: [String]) {
        let root = TestEnvironment.repositoryRoot.appendingPathComponent("Sources/\(module)")
        var folders: [String: [Source]] = [:]
        var loose: [String] = []
        for entry in try FileManager.default.contentsOfDirectory(atPath: root.path).sorted() {
            let url = root.appendingPathComponent(entry)
            guard (try url.resourceValues(forKeys: [.isDirectoryKey])).isDirectory == true else {
                if entry.hasSuffix(".swift") { loose.append(entry) }
                continue
            }
            folders[entry] = []
            let files = FileManager.default.enumerator(atPath: url.path)
            while let name = files?.nextObject() as? String {
                guard name.hasSuffix(".swift") else { continue }
                let text = try String(contentsOf: url.appendingPathComponent(name), encoding: .utf8)
                folders[entry, default: []].append((name, text))
            }
        }
        return (folders, loose)
    }

    @Test func noFolderOfFerryUsesALaterOne() throws {
        try Self.check("Ferry", Self.order)
    }

    @Test func noFolderOfFerryHTTPUsesALaterOne() throws {
        try Self.check("FerryHTTP", Self.httpOrder)
    }

    /// Every folder of `Sources/<module>` is in `order`, every file in a folder,
    /// and no folder names a type of a later one.
    static func check(_ module: String, _ order: [String]) throws {
        let (folders, loose) = try sources(module)
        #expect(Set(folders.keys) == Set(order), "every folder of Sources/\(module) has one place in the order")
        #expect(loose.isEmpty, "Sources/\(module) holds files outside any folder: \(loose)")
        #expect(folders.values.allSatisfy { !$0.isEmpty }, "each folder's files are read")
        for use in upwardUses(folders, order: order) {
            Issue.record("\(use)")
        }
    }

    /// The check itself: a planted upward use is found, with its line; the same
    /// name in a comment or a string, or a use in the other direction, is not.
    @Test func aPlantedUpwardUseIsFound() {
        let folders: [String: [Source]] = [
            "Scope": [("Caller.swift", "struct Caller {\n    let plan: ResourcePlan?\n}\n")],
            "Planning": [
                (
                    "ResourcePlan.swift",
                    """
                    /// Made for a ``Caller``.
                    struct ResourcePlan {
                        let caller: Caller // not a ResourceResult
                        let note = "ResourceResult"
                    }
                    """
                )
            ],
            "Execution": [("ResourceResult.swift", "enum ResourceResult { case plan(ResourcePlan) }\n")],
        ]
        #expect(
            Self.upwardUses(folders) == [
                UpwardUse(file: "Scope/Caller.swift", line: 2, name: "ResourcePlan", declaredIn: "Planning")
            ])
    }

    /// The same in FerryHTTP's order, planted as its last cycle was: the
    /// request's context (Core) holding the server's loop.
    @Test func aPlantedUpwardUseIsFoundInFerryHTTP() {
        let folders: [String: [Source]] = [
            "Core": [("ParkingTicket.swift", "struct ExchangeAddress {\n    let handle: LoopHandle\n}\n")],
            "Server": [("WorkerPool.swift", "final class LoopHandle {}\nstruct Exchange { let address: ExchangeAddress }\n")],
        ]
        #expect(
            Self.upwardUses(folders, order: Self.httpOrder) == [
                UpwardUse(file: "Core/ParkingTicket.swift", line: 2, name: "LoopHandle", declaredIn: "Server")
            ])
    }
}
