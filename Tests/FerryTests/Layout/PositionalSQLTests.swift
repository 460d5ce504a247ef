import FerryTestSupport
import Foundation
import Testing

/// The typed SQL boundary (docs/ARCHITECTURE.md, "The SQL boundary"): outside
/// its own files, no statement names a parameter by a typed `$n` in a string
/// literal, and no row is read by column position (`row.bool(2)`, `row[0]`,
/// `rows.map { $0[0] }`).
/// Statements bind through `SQLQuery` (`\(bind: value)`) or `SQLBinds` in
/// Ferry, and through `PostgresStatement`'s own interpolation in the modules
/// below it (migrations, test support); rows are read by column name.
@Suite struct PositionalSQLTests {
    /// The modules that speak to PostgreSQL. FerryKit's SQL is SQLite's,
    /// through GRDB, outside this boundary.
    static let modules = ["Ferry", "FerryCLI", "FerryMigrations", "FerryTestSupport", "ferry-fuzz"]

    /// The boundary's own files: the statement and row types.
    static let boundary = ["Ferry/SQL/", "FerryPostgres/"]

    /// One positional use.
    struct Use: CustomStringConvertible {
        let file: String
        let line: Int
        let text: String
        var description: String { "\(file):\(line): \(text)" }
    }

    @Test func noPositionalSQLOutsideTheBoundary() throws {
        let uses = try Self.modules.flatMap { try Self.uses(inModule: $0) }
        #expect(uses.isEmpty, "positional SQL outside the boundary:\n\(uses.map(\.description).joined(separator: "\n"))")
    }

    @Test func theScanFindsBindsInLiteralsAndReadsByPosition() {
        let source = #"""
            let a = PlannedStatement("SELECT x FROM t WHERE id = $1", [.text(id)])
            let b = """
                SELECT \(column) FROM t
                 WHERE k = $12
                """
            let c = try row.bool(2)
            let d = result.first?[0]
            let e = rows.map { $0 + $1 }  // closures: not SQL
            let f = "cost: \(price)$"  // a dollar with no number
            let g = try row.uint64("frontier")  // by name
            let h = "\(rows.map { $0.id })"  // a closure in an interpolation
            let i = #"raw $3"#
            let j = rows.map { $0[0] }
            let k = rows.first { $0[8] != "f" }
            let l = entries.withLock { $0[key] }  // a dictionary by key
            """#
        let found = Self.uses(source, file: "planted.swift").map(\.line)
        #expect(found == [1, 4, 6, 7, 12, 13, 14])
    }

    /// The positional uses in one module's files, named `Module/path`.
    static func uses(inModule module: String) throws -> [Use] {
        let root = TestEnvironment.repositoryRoot.appendingPathComponent("Sources")
        let directory = root.appendingPathComponent(module)
        guard let walker = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil) else { return [] }
        var uses: [Use] = []
        for case let url as URL in walker where url.pathExtension == "swift" {
            let name = String(url.path.dropFirst(root.path.count + 1))
            guard !boundary.contains(where: { name.hasPrefix($0) }) else { continue }
            uses += Self.uses(try String(contentsOf: url, encoding: .utf8), file: name)
        }
        return uses
    }

    /// The positional uses in `text`: a `$n` inside a string literal (not in
    /// an interpolation), or a typed read or subscript by column number.
    static func uses(_ text: String, file: String) -> [Use] {
        let (code, literals) = split(text)
        var uses: [Use] = []
        let reads = [
            #"\.(bool|int|int64|uint64|double|string)\(\s*[0-9]+\s*\)"#, #"\b(row\??|first\?)\[[0-9]+\]"#, #"\brows\[[^\]]*\]\[[0-9]+\]"#,
            #"\$0\[[0-9]+\]"#,
        ]
        for (number, line) in code.enumerated() {
            let literal = literals[number]
            if literal.range(of: #"\$[0-9]"#, options: .regularExpression) != nil
                || reads.contains(where: { line.range(of: $0, options: .regularExpression) != nil })
            {
                uses.append(Use(file: file, line: number + 1, text: line.trimmingCharacters(in: .whitespaces)))
            }
        }
        return uses
    }

    /// `text`'s lines twice, numbered alike: its code (comments dropped,
    /// string literals' text blanked, interpolations kept as code), and its
    /// string literals' text alone.
    static func split(_ text: String) -> (code: [String], literals: [String]) {
        enum State {
            case code(depth: Int)  // depth: open parentheses, inside an interpolation
            case string(hashes: Int, multiline: Bool)
        }
        var stack: [State] = [.code(depth: 0)]
        var code: [String] = [], literals: [String] = []
        var codeLine = "", literalLine = ""
        let characters = Array(text)
        var index = 0
        func peek(_ offset: Int) -> Character? { index + offset < characters.count ? characters[index + offset] : nil }
        func hashes(from start: Int) -> Int {
            var count = 0
            while start + count < characters.count, characters[start + count] == "#" { count += 1 }
            return count
        }
        while index < characters.count {
            let character = characters[index]
            if character == "\n" {
                code.append(codeLine)
                literals.append(literalLine)
                codeLine = ""
                literalLine = ""
                index += 1
                continue
            }
            switch stack[stack.count - 1] {
            case .code(let depth):
                if character == "/", peek(1) == "/" {
                    while index < characters.count, characters[index] != "\n" { index += 1 }
                    continue
                }
                if character == "/", peek(1) == "*" {
                    var nesting = 0
                    repeat {
                        if characters[index] == "/", peek(1) == "*" {
                            nesting += 1
                            index += 2
                        } else if characters[index] == "*", peek(1) == "/" {
                            nesting -= 1
                            index += 2
                        } else {
                            if characters[index] == "\n" {
                                code.append(codeLine)
                                literals.append(literalLine)
                                codeLine = ""
                                literalLine = ""
                            }
                            index += 1
                        }
                    } while nesting > 0 && index < characters.count
                    continue
                }
                let count = hashes(from: index)
                if characters.indices.contains(index + count), characters[index + count] == "\"" {
                    let multiline = peek(count + 1) == "\"" && peek(count + 2) == "\""
                    stack.append(.string(hashes: count, multiline: multiline))
                    codeLine += "\"\""
                    index += count + (multiline ? 3 : 1)
                    continue
                }
                if character == "(" { stack[stack.count - 1] = .code(depth: depth + 1) }
                if character == ")" {
                    if depth == 0, stack.count > 1 {
                        stack.removeLast()  // the interpolation ends
                        index += 1
                        continue
                    }
                    stack[stack.count - 1] = .code(depth: depth - 1)
                }
                codeLine.append(character)
                index += 1
            case .string(let count, let multiline):
                let closing = multiline ? 3 : 1
                if character == "\"", (0..<closing).allSatisfy({ peek($0) == "\"" }), hashes(from: index + closing) >= count {
                    stack.removeLast()
                    index += closing + count
                    continue
                }
                if character == "\\", hashes(from: index + 1) == count {
                    let after = index + 1 + count
                    if characters.indices.contains(after), characters[after] == "(" {
                        stack.append(.code(depth: 0))
                        literalLine += " "
                        index = after + 1
                        continue
                    }
                    literalLine += " "
                    // An escaped character; a line continuation keeps its newline, to count the line.
                    index = characters.indices.contains(after) && characters[after] == "\n" ? after : after + 1
                    continue
                }
                literalLine.append(character)
                index += 1
            }
        }
        code.append(codeLine)
        literals.append(literalLine)
        return (code, literals)
    }
}
