import FerryTestSupport
import Foundation
import Testing

/// The one direction of a request's steps inside the Ferry target
/// (docs/ARCHITECTURE.md, "One direction"): Shared → Actions → Planning →
/// Execution → Response → Routing, where each folder may use the types of the
/// folders before it and none after it. Routing, last, composes them all.
///
/// A test rather than one target per step: the steps call each other on every
/// request, and a module boundary there would cost cross-module calls (no
/// inlining or specialisation without `@inlinable`) for a rule a scan can hold.
/// The scan reads each folder's top-level type declarations, then every
/// identifier in the earlier folders' code (comments and string literals
/// left out); one that names a later folder's type is an upward use.
@Suite struct StepDirectionTests {
    /// The folders of `Sources/Ferry` in the order a request's types flow.
    static let order = ["Shared", "Actions", "Planning", "Execution", "Response", "Routing"]

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
    static func upwardUses(_ folders: [String: [Source]]) -> [UpwardUse] {
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

    /// The Ferry target's step folders as they are on disk.
    static func sources() throws -> [String: [Source]] {
        let root = TestEnvironment.repositoryRoot.appendingPathComponent("Sources/Ferry")
        var folders: [String: [Source]] = [:]
        for folder in order {
            let directory = root.appendingPathComponent(folder)
            for name in try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() where name.hasSuffix(".swift") {
                let text = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
                folders[folder, default: []].append((name, text))
            }
        }
        return folders
    }

    @Test func noStepUsesALaterOne() throws {
        let folders = try Self.sources()
        #expect(folders.count == Self.order.count, "every step folder is read")
        for use in Self.upwardUses(folders) {
            Issue.record("\(use)")
        }
    }

    /// The check itself: a planted upward use is found, with its line; the same
    /// name in a comment or a string, or a use in the other direction, is not.
    @Test func aPlantedUpwardUseIsFound() {
        let folders: [String: [Source]] = [
            "Shared": [("Caller.swift", "struct Caller {\n    let plan: ResourcePlan?\n}\n")],
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
                UpwardUse(file: "Shared/Caller.swift", line: 2, name: "ResourcePlan", declaredIn: "Planning")
            ])
    }
}
