import FerryTestSupport
import Foundation
import Testing
@testable import FerryMigrations

/// `migrations/schema.snapshot.sql` is the schema a fresh database gets, so a review sees
/// the current body of every function; and each function is defined in one family file.
@Suite struct SchemaSnapshotTests {
    static let file = TestEnvironment.repositoryRoot.appendingPathComponent("migrations/schema.snapshot.sql")

    /// Fails when the file is stale. `bash .ci/schema-snapshot.sh` writes it again (this
    /// test, with FERRY_WRITE_SCHEMA_SNAPSHOT=1).
    @Test func theSnapshotFileIsTheSchemaOfAFreshDatabase() throws {
        let database = try ScratchDatabase.create()
        defer { database.drop() }
        _ = try Migrator(
            databaseURL: database.url, core: try MigrationFile.core(), repeatable: try RepeatableFile.core(), app: nil
        ).migrate()
        let connection = try database.connect()
        defer { connection.close() }
        let fresh = try SchemaSnapshot.text(connection)
        if ProcessInfo.processInfo.environment["FERRY_WRITE_SCHEMA_SNAPSHOT"] == "1" {
            try Data(fresh.utf8).write(to: Self.file)
        }
        let committed = (try? String(contentsOf: Self.file, encoding: .utf8)) ?? ""
        #expect(
            committed == fresh,
            """
            migrations/schema.snapshot.sql is stale (\(Self.firstDifference(committed, fresh))): \
            run `bash .ci/schema-snapshot.sh` and commit the file
            """)
    }

    /// Every function of the snapshot is defined in exactly one file of
    /// `migrations/functions`, and those files define nothing else.
    @Test func eachFunctionIsDefinedInOneFamilyFile() throws {
        var definedIn: [String: [String]] = [:]
        for file in try RepeatableFile.core() {
            for function in Self.functions(in: file.script) { definedIn[function, default: []].append(file.name) }
        }
        let twice = definedIn.filter { $0.value.count > 1 }.map { "\($0.key) in \($0.value.joined(separator: ", "))" }
        #expect(twice.isEmpty, "defined more than once: \(twice.sorted())")
        let snapshot = Self.functions(in: try String(contentsOf: Self.file, encoding: .utf8))
        #expect(!snapshot.isEmpty)
        #expect(Set(snapshot).subtracting(definedIn.keys).sorted() == [], "in the schema but in no family file")
        #expect(Set(definedIn.keys).subtracting(snapshot).sorted() == [], "in a family file but not in the schema")
    }

    /// `ferry.name(arguments)` of every `CREATE OR REPLACE FUNCTION` header in `text`, as
    /// `pg_get_functiondef` writes them (the family files hold its output).
    static func functions(in text: String) -> [String] {
        text.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("CREATE OR REPLACE FUNCTION ferry.") else { return nil }
            return String(line.dropFirst("CREATE OR REPLACE FUNCTION ".count))
        }
    }

    /// `line N: "…" here, "…" there`, for a failure message.
    static func firstDifference(_ committed: String, _ fresh: String) -> String {
        let old = committed.split(separator: "\n", omittingEmptySubsequences: false)
        let new = fresh.split(separator: "\n", omittingEmptySubsequences: false)
        for index in 0..<max(old.count, new.count) {
            let left = index < old.count ? String(old[index]) : "(end)"
            let right = index < new.count ? String(new[index]) : "(end)"
            if left != right { return "line \(index + 1): the file has \"\(left)\", the database \"\(right)\"" }
        }
        return "no line differs"
    }
}
