import FerryPostgres
import Foundation
import Testing
@testable import FerryMigrations
@testable import FerryTestSupport

/// Scratch databases copied from a template (`ScratchTemplate`): a copy is the database a
/// real migration makes, a changed migration set gets a template of its own, and
/// processes that copy at once, while the template is still to be built, all succeed.
@Suite struct ScratchTemplateTests {
    /// An app of one file whose marker makes its set new to the cluster, so its template is
    /// built by this test.
    static func app(_ marker: String) -> [String: String] {
        ["0001_marker.sql": "CREATE SCHEMA app;\nCREATE TABLE app.marker (v text);\nINSERT INTO app.marker VALUES ('\(marker)');\n"]
    }

    static func templates() throws -> [String] {
        let admin = try PostgresConnection(url: try TestEnvironment.ownerURL())
        defer { admin.close() }
        return try ScratchTemplate.existing(on: admin)
    }

    static func drop(_ template: String) throws {
        let admin = try PostgresConnection(url: try TestEnvironment.ownerURL())
        defer { admin.close() }
        try admin.execute("DROP DATABASE IF EXISTS \"\(template)\"")
    }

    /// What a database's migrations left: Ferry's schema, what Ferry generated for the
    /// app's tables, the app's columns, and both histories.
    static func state(_ database: ScratchDatabase) throws -> [String] {
        [try RepeatableUpgradeTests.snapshot(database)] + (try RepeatableUpgradeTests.generated(database))
            + (try database.column(
                """
                SELECT format('%s.%s %s %s', table_name, column_name, data_type, column_default) FROM information_schema.columns
                 WHERE table_schema = 'app'
                """
            ).compactMap { $0 }.sorted())
            + (try database.column("SELECT format('%s %s %s', track, name, checksum) FROM ferry.schema_migrations").compactMap { $0 }.sorted())
            + (try database.column("SELECT name || ' ' || checksum FROM ferry.schema_repeatables").compactMap { $0 }.sorted())
    }

    @Test(arguments: [ExampleApp.study, .todo])
    func aCopyIsTheDatabaseARealMigrationMakes(app: ExampleApp) throws {
        let copied = try ScratchDatabase(prefix: "ferry_tplcopy", app: app)
        defer { copied.drop() }
        let migrated = try ScratchDatabase(prefix: "ferry_tplreal", app: app, template: false)
        defer { migrated.drop() }
        let copy = try Self.state(copied)
        let real = try Self.state(migrated)
        #expect(copy.count > 20)
        #expect(copy == real, "copy only: \(copy.filter { !real.contains($0) }), real only: \(real.filter { !copy.contains($0) })")
        #expect(
            try copied.column("SELECT pg_catalog.pg_get_userbyid(datdba) FROM pg_catalog.pg_database WHERE datname = current_database()")
                == migrated.column("SELECT pg_catalog.pg_get_userbyid(datdba) FROM pg_catalog.pg_database WHERE datname = current_database()"))
        let template = ScratchTemplate.name(try .example(app), ownerURL: try TestEnvironment.ownerURL())
        #expect(try Self.templates().contains(template))
    }

    /// One byte changed in one file names another template, built for it; the first stays
    /// (the same binary's), and each copy has its own set's schema.
    @Test func changedMigrationsGetATemplateOfTheirOwn() throws {
        let run = UUID().uuidString.lowercased()
        let owner = try TestEnvironment.ownerURL()
        let first = try ScratchMigrations.inline(Self.app("\(run) a"))
        let second = try ScratchMigrations.inline(Self.app("\(run) b"))
        let names = (ScratchTemplate.name(first, ownerURL: owner), ScratchTemplate.name(second, ownerURL: owner))
        defer { for name in [names.0, names.1] { try? Self.drop(name) } }
        #expect(names.0 != names.1)
        #expect(names.0 == ScratchTemplate.name(try .inline(Self.app("\(run) a")), ownerURL: owner))
        #expect(try !Self.templates().contains(names.0) && !Self.templates().contains(names.1))

        let a = try ScratchDatabase(prefix: "ferry_tplset", appFiles: Self.app("\(run) a"))
        defer { a.drop() }
        #expect(try Self.templates().contains(names.0))
        #expect(try !Self.templates().contains(names.1))
        let b = try ScratchDatabase(prefix: "ferry_tplset", appFiles: Self.app("\(run) b"))
        defer { b.drop() }
        #expect(try Self.templates().contains(names.0) && Self.templates().contains(names.1))
        #expect(try a.column("SELECT v FROM app.marker") == ["\(run) a"])
        #expect(try b.column("SELECT v FROM app.marker") == ["\(run) b"])
        // A copy is a database of its own: writing to one leaves the template and the next copy alone.
        _ = try a.column("INSERT INTO app.marker VALUES ('written') RETURNING v")
        let again = try ScratchDatabase(prefix: "ferry_tplset", appFiles: Self.app("\(run) a"))
        defer { again.drop() }
        #expect(try again.column("SELECT v FROM app.marker") == ["\(run) a"])
    }

    /// A template of an older test binary is dropped when this one builds a template; one of
    /// a newer binary is left to it.
    @Test func buildingDropsOlderBinariesTemplates() throws {
        let older = ScratchTemplate.prefix + "1_" + String(repeating: "0", count: 16)
        let newer = ScratchTemplate.prefix + String(ScratchTemplate.build.stamp + 1) + "_" + String(repeating: "0", count: 16)
        let admin = try PostgresConnection(url: try TestEnvironment.ownerURL())
        defer { admin.close() }
        for name in [older, newer] { try admin.execute("CREATE DATABASE \"\(name)\"") }
        defer { for name in [older, newer] { try? Self.drop(name) } }
        let run = UUID().uuidString.lowercased()
        let database = try ScratchDatabase(prefix: "ferry_tplold", appFiles: Self.app(run))
        defer { database.drop() }
        defer { try? Self.drop(ScratchTemplate.name(try .inline(Self.app(run)), ownerURL: try TestEnvironment.ownerURL())) }
        let left = try Self.templates()
        #expect(!left.contains(older))
        #expect(left.contains(newer))
    }

    /// Two test processes that need the same template, not built yet, both get their copy:
    /// one builds it while the other waits for the lock, then finds it built.
    @Test func twoProcessesCopyingAtOnceBothSucceed() throws {
        let run = UUID().uuidString.lowercased()
        let template = ScratchTemplate.name(try .inline(Self.app(run)), ownerURL: try TestEnvironment.ownerURL())
        defer { try? Self.drop(template) }
        let binary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        let environment = ProcessInfo.processInfo.environment.merging(["FERRY_TEMPLATE_CHILD_MARKER": run]) { $1 }
        let arguments = ["--testing-library", "swift-testing", "--filter", "ScratchTemplateTests/childCopiesATemplate"]
        let children = (0..<2).map { _ in
            startThread {
                Result {
                    try SpawnedRun.run(
                        executable: binary, arguments: arguments, environment: environment,
                        directory: TestEnvironment.repositoryRoot.path, input: nil)
                }
            }
        }
        let outcomes = children.map { $0.wait() }
        for outcome in outcomes {
            let (status, stdout, stderr) = try outcome.get()
            let output = String(decoding: stdout + stderr, as: UTF8.self)
            #expect(status == 0, "\(output)")
            #expect(output.contains("Test run with 1 test"), "the child ran no test: \(output)")
        }
        let templates = try Self.templates()
        #expect(templates.contains(template))
        // Its own half-built name only: other suites of this process build theirs meanwhile.
        #expect(!templates.contains(template + ScratchTemplate.building))
    }

    /// The child of ``twoProcessesCopyingAtOnceBothSucceed()``.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["FERRY_TEMPLATE_CHILD_MARKER"] != nil))
    func childCopiesATemplate() throws {
        let marker = try TestEnvironment.require("FERRY_TEMPLATE_CHILD_MARKER")
        let database = try ScratchDatabase(prefix: "ferry_tplchild", appFiles: Self.app(marker))
        defer { database.drop() }
        #expect(try database.column("SELECT v FROM app.marker") == [marker])
    }
}
