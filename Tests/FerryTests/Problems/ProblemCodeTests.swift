@testable import Ferry
import FerryTestSupport
import Foundation
import Testing

/// `ProblemCode` is the one list of the contract's codes: held here to docs/API.md
/// (its "Error codes" table and the JWT refusals' table) both ways, and to the codes
/// the SQL of writes names as text, which reach the answer through
/// `ProblemCode(rawValue:)` in `DatabaseFailure` (an unknown one would be a 500).
@Suite struct ProblemCodeTests {
    static func read(_ path: String) throws -> String {
        try String(contentsOf: TestEnvironment.repositoryRoot.appendingPathComponent(path), encoding: .utf8)
    }

    /// The backticked snake_case words of the contract's tables of codes.
    static func documentedCodes() throws -> Set<String> {
        let api = try read("docs/API.md")
        let table = try #require(api.range(of: "## Error codes")).upperBound
        let end = api[table...].range(of: "\n## ")?.lowerBound ?? api.endIndex
        let word = try Regex(#"`([a-z]+(?:_[a-z]+)*)`"#)
        var codes = Set(api[table..<end].matches(of: word).compactMap { String($0.output[1].substring ?? "") })
        // The JWT refusals' table, which the Error codes table points to ("the `token_*` codes above"):
        // its first column (the others name claims).
        for line in api.split(separator: "\n") where line.hasPrefix("  | `token_") {
            if let first = line.firstMatch(of: word) { codes.insert(String(first.output[1].substring ?? "")) }
        }
        return codes
    }

    @Test func everyCodeIsInTheContractAndEveryDocumentedCodeIsACode() throws {
        let documented = try Self.documentedCodes()
        let codes = Set(ProblemCode.allCases.map(\.rawValue))
        #expect(codes.subtracting(documented).isEmpty, "codes docs/API.md's tables do not name: \(codes.subtracting(documented).sorted())")
        let missing = documented.subtracting(codes)
        #expect(missing.isEmpty, "docs/API.md names codes ProblemCode lacks: \(missing.sorted())")
        #expect(documented.count > 40)
    }

    /// Every code the SQL of writes puts in a failing item (`'code', 'x'` or a CASE
    /// choosing among them), in the statements Swift writes and in Ferry's migrations.
    @Test func everyCodeTheSQLRaisesIsACode() throws {
        let root = TestEnvironment.repositoryRoot
        var texts: [String] = []
        // The plans, and the reference check the catalog keeps for them.
        for folder in ["Sources/Ferry/Planning", "Sources/Ferry/Schema", "migrations"] {
            let names = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(folder).path)
            for name in names where name.hasSuffix(".swift") || name.hasSuffix(".sql") {
                texts.append(try Self.read("\(folder)/\(name)"))
            }
        }
        let coded = try Regex(#"'code',\s*(CASE\b[\s\S]*?\bEND|'[a-z_]+')"#)
        let chosen = try Regex(#"(?:THEN|ELSE)\s+'([a-z_]+)'"#)
        let literal = try Regex(#"^'([a-z_]+)'$"#)
        var raised: Set<String> = []
        for text in texts {
            for match in text.matches(of: coded) {
                let part = String(match.output[1].substring ?? "")
                if let one = part.firstMatch(of: literal) {
                    raised.insert(String(one.output[1].substring ?? ""))
                } else {
                    for choice in part.matches(of: chosen) { raised.insert(String(choice.output[1].substring ?? "")) }
                }
            }
        }
        #expect(
            raised.isSuperset(of: ["validation_failed", "revision_conflict", "gone", "already_exists", "unknown_field"]),
            "found the SQL's codes: \(raised.sorted())")
        let unknown = raised.filter { ProblemCode(rawValue: $0) == nil }
        #expect(unknown.isEmpty, "the SQL raises codes ProblemCode lacks: \(unknown.sorted())")
    }

    @Test func theOpenAPIDocumentListsEveryCode() {
        let listed = OpenAPIDocument.problemCodes + OpenAPIDocument.jwtProblemCodes
        #expect(listed.count == Set(listed).count, "listed twice: \(listed)")
        #expect(Set(listed) == Set(ProblemCode.allCases.map(\.rawValue)))
        #expect(JWTRefusal.codes.count == 11)
    }
}
