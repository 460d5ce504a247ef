import Foundation
import Testing
@testable import FerryMigrations

/// Versioned core files from 0035 on keep to tables and data: they neither define nor
/// call Ferry's functions (migrations/README.md). A versioned file runs before the family
/// files of the same run, and on a fresh database after 0034's functions instead of
/// today's, so what it called would differ with the database's history: the fault of
/// rust-db/refinery#211, a versioned file that depends on a body that later changes.
@Suite struct VersionedFileRuleTests {
    /// The first core version under the rule.
    static let firstUnderRule = 35

    @Test func versionedCoreFilesFromTheRuleOnNeitherDefineNorCallFerryFunctions() throws {
        let functions = try Self.ferryFunctions()
        #expect(functions.contains("hint") && functions.contains("write_items"))
        var findings: [String] = []
        for file in try MigrationFile.core() where file.version >= Self.firstUnderRule {
            findings += Self.findings(in: file.script, functions: functions).map { "\(file.fileName):\($0)" }
        }
        #expect(findings == [])
    }

    /// The check finds what it is for, and leaves comments, tables and dropping alone.
    @Test func theCheckFindsDefinitionsAndCalls() {
        let planted = """
            -- ferry.hint(x) in a comment is fine
            ALTER TABLE ferry.users ADD COLUMN nickname text;
            CREATE OR REPLACE FUNCTION ferry.nickname(p uuid) RETURNS text LANGUAGE sql AS 'SELECT 1';
            UPDATE ferry.users SET nickname = ferry.claim('nick');
            INSERT INTO ferry.users (id) VALUES (gen_random_uuid());
            CREATE TRIGGER t AFTER INSERT ON ferry.users FOR EACH ROW EXECUTE FUNCTION ferry.x();
            create policy p on ferry.users using (true);
            DROP FUNCTION IF EXISTS ferry.old_thing(uuid);
            """
        #expect(
            Self.findings(in: planted, functions: ["claim", "x", "old_thing", "users"]) == [
                "3: defines a function, trigger or policy (it belongs in a family file of migrations/functions)",
                "4: calls ferry.claim (a body a family file may change)",
                "6: defines a function, trigger or policy (it belongs in a family file of migrations/functions)",
                "7: defines a function, trigger or policy (it belongs in a family file of migrations/functions)",
            ])
    }

    /// The names of the functions the family files define.
    static func ferryFunctions() throws -> Set<String> {
        Set(
            try RepeatableFile.core().flatMap { SchemaSnapshotTests.functions(in: $0.script) }.map { signature in
                String(signature.dropFirst("ferry.".count).prefix { $0 != "(" })
            })
    }

    /// `line: what` for each line of `script` that defines a function, trigger or policy,
    /// or calls one of `functions` (names in schema `ferry`); a line's `--` comment is
    /// left out, and so is a table's name before its column list. Dropping is allowed: a
    /// retired function is dropped by a versioned file once no family file defines it.
    static func findings(in script: String, functions: Set<String>) -> [String] {
        let definition = try! Regex(#"(?i)\b(create|alter)\s+(or\s+replace\s+)?(function|procedure|trigger|policy)\b"#)
        let call = try! Regex(#"(?i)\bferry\.([a-z_][a-z0-9_]*)\s*\("#)
        var found: [String] = []
        for (index, raw) in script.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.range(of: "--").map { raw[..<$0.lowerBound] } ?? raw[...]
            if line.contains(definition) {
                found.append("\(index + 1): defines a function, trigger or policy (it belongs in a family file of migrations/functions)")
                continue
            }
            if line.range(of: "DROP FUNCTION", options: .caseInsensitive) != nil { continue }
            for match in line.matches(of: call) {
                let name = String(match.output[1].substring ?? "")
                guard functions.contains(name.lowercased()) else { continue }
                // A table's name before its columns: INSERT INTO ferry.t (…), ON ferry.t (…).
                let before = String(line[..<match.range.lowerBound])
                if before.range(of: #"(?i)\b(into|table|on|references)\s*$"#, options: .regularExpression) != nil { continue }
                found.append("\(index + 1): calls ferry.\(name) (a body a family file may change)")
            }
        }
        return found
    }
}
