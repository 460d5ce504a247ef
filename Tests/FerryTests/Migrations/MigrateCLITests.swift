import Foundation
import Testing
import FerryTestSupport
@testable import Ferry
@testable import FerryMigrations

/// `ferry migrate` as a user runs it: the built binary, a scratch database named by
/// FERRY_DATABASE_MIGRATION_URL, exit codes and output.
@Suite struct MigrateCLITests {
    /// The repository's own migrations/ directory (from this file's path).
    static let repositoryMigrations = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("migrations").path

    @Test func applyStatusDryRunAndFailureEndToEnd() async throws {
        let database = try ScratchDatabase.create()
        defer { database.drop() }
        let fixture = try MigrationFixture([
            "0001_create.sql": "CREATE TABLE public.items (id int PRIMARY KEY);\n",
            "0002_fill.sql": "INSERT INTO public.items VALUES (1);\n",
        ])
        defer { fixture.destroy() }
        let env = ["FERRY_DATABASE_MIGRATION_URL": database.url]
        let password = try #require(URLComponents(string: database.url)?.password)

        let dry = try FerryProcess.run(["migrate", "--dry-run", "--dir", fixture.path], environment: env)
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdout.contains("would apply 0001_create.sql\nwould apply 0002_fill.sql\n"))
        #expect(dry.stdout.contains("dry run: 2 migrations would be applied; nothing was run"))
        #expect(try database.column("SELECT to_regclass('public.items')::text") == [nil])

        let apply = try FerryProcess.run(["migrate", "--dir", fixture.path], environment: env)
        #expect(apply.status == 0, "\(apply.stderr)")
        let lines = apply.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 4)
        #expect(lines.first == "migrating \(database.url.replacingOccurrences(of: ":\(password)@", with: ":***@")) (2 files in \(fixture.path))")
        #expect(lines.dropFirst().first?.range(of: #"^applied 0001_create\.sql in \d+ ms$"#, options: .regularExpression) != nil)
        #expect(lines.last?.range(of: #"^applied 2 migrations in \d+ ms \(0 already applied\)$"#, options: .regularExpression) != nil)
        #expect(!apply.stdout.contains(":\(password)@") && !apply.stderr.contains(":\(password)@"))

        let again = try FerryProcess.run(["migrate", "apply", "--dir", fixture.path], environment: env)
        #expect(again.status == 0)
        #expect(again.stdout.hasSuffix("nothing to apply (2 already applied)\n"))

        try fixture.write("0003_broken.sql", "-- three\nINSERT INTO public.items VALUES (3);\nINSERT INTO public.items VALUES (3);\n")
        let failed = try FerryProcess.run(["migrate", "--dir", fixture.path], environment: env)
        #expect(failed.status == 1)
        #expect(failed.stderr.hasPrefix("ferry: migration 0003_broken.sql failed"))
        #expect(failed.stderr.contains("duplicate key value violates unique constraint \"items_pkey\""))
        #expect(failed.stderr.contains("detail: Key (id)=(3) already exists."))
        #expect(try database.column("SELECT count(*) FROM public.items") == ["1"])

        let status = try FerryProcess.run(["migrate", "status", "--dir", fixture.path], environment: env)
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("0003_broken.sql  pending\n"))
        #expect(status.stdout.hasSuffix("2 applied, 1 pending, 0 changed, 0 missing\n"))

        try fixture.write("0001_create.sql", "CREATE TABLE public.items (id bigint PRIMARY KEY);\n")
        let refused = try FerryProcess.run(["migrate", "--dir", fixture.path], environment: env)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("refusing to migrate"))
        #expect(refused.stderr.contains("0001_create.sql: applied "))
    }

    @Test func commandLineURLOverridesConfigurationAndBadInputFailsClearly() throws {
        let database = try ScratchDatabase.create()
        defer { database.drop() }
        let fixture = try MigrationFixture(["0001_a.sql": "SELECT 1;", "1_b.sql": "SELECT 2;"])
        defer { fixture.destroy() }
        let unreachable = ["FERRY_DATABASE_MIGRATION_URL": "postgresql://nobody:hunter2@127.0.0.1:1/none"]

        let duplicate = try FerryProcess.run(["migrate", "--dir", fixture.path, "--database-url", database.url], environment: unreachable)
        #expect(duplicate.status == 1)
        #expect(duplicate.stderr == "ferry: migration version 1 is used by more than one file: 0001_a.sql, 1_b.sql\n")

        try fixture.remove("1_b.sql")
        let applied = try FerryProcess.run(["migrate", "--dir", fixture.path, "--database-url", database.url], environment: unreachable)
        #expect(applied.status == 0, "\(applied.stderr)")

        let noServer = try FerryProcess.run(["migrate", "status", "--dir", fixture.path], environment: unreachable)
        #expect(noServer.status == 1)
        #expect(noServer.stderr.hasPrefix("ferry: connecting to the database failed: "))
        #expect(!noServer.stderr.contains("hunter2") && !noServer.stdout.contains("hunter2"))
        #expect(noServer.stdout.contains("postgresql://nobody:***@127.0.0.1:1/none"))

        let noDirectory = try FerryProcess.run(["migrate", "--dir", "/nonexistent/dir"], environment: unreachable)
        #expect(noDirectory.status == 1)
        #expect(noDirectory.stderr == "ferry: migrations directory /nonexistent/dir: it does not exist\n")

        let badTimeout = try FerryProcess.run(["migrate", "--lock-timeout", "0"], environment: unreachable)
        #expect(badTimeout.status == 64)
        #expect(badTimeout.stderr.contains("--lock-timeout must be a positive number of seconds"))
    }

    @Test func twoProcessesAtOnceApplyEachFileOnce() async throws {
        let database = try ScratchDatabase.create()
        defer { database.drop() }
        let fixture = try MigrationFixture([
            "0001_log.sql": "CREATE TABLE public.log (file text);\n",
            "0002_slow.sql": "INSERT INTO public.log VALUES ('0002'); SELECT pg_sleep(0.5);\n",
        ])
        defer { fixture.destroy() }
        let env = ["FERRY_DATABASE_MIGRATION_URL": database.url]
        let path = fixture.path
        async let first = onThread { Result { try FerryProcess.run(["migrate", "--dir", path], environment: env) } }
        async let second = onThread { Result { try FerryProcess.run(["migrate", "--dir", path], environment: env) } }
        let outcomes = try await [first, second].map { try $0.get() }
        #expect(outcomes.map(\.status) == [0, 0], "\(outcomes.map(\.stderr))")
        let appliedLines = outcomes.flatMap { $0.stdout.split(separator: "\n") }.filter { $0.hasPrefix("applied 000") }
        #expect(appliedLines.count == 2)
        #expect(outcomes.contains { $0.stdout.hasSuffix("nothing to apply (2 already applied)\n") })
        #expect(try database.column("SELECT count(*) FROM public.log") == ["1"])
    }

    @Test func realMigrationsApplyToAFreshDatabase() throws {
        let database = try ScratchDatabase.create()
        defer { database.drop() }
        let env = ["FERRY_DATABASE_MIGRATION_URL": database.url]
        let directory = Self.repositoryMigrations
        let files = try MigrationDirectory.load(path: directory)
        #expect(files.map(\.fileName).starts(with: ["0001_ferry_core.sql", "0002_example_app.sql"]))

        let apply = try FerryProcess.run(["migrate", "--dir", directory], environment: env)
        #expect(apply.status == 0, "\(apply.stdout)\n\(apply.stderr)")
        #expect(apply.stdout.contains("applied 0001_ferry_core.sql in "))
        #expect(apply.stdout.contains("applied 0002_example_app.sql in "))
        #expect(try database.column("SELECT count(*) FROM ferry.schema_migrations") == ["\(files.count)"])
        #expect(try database.column("SELECT to_regclass('ferry.users')::text") == ["ferry.users"])

        let again = try FerryProcess.run(["migrate"], environment: env, in: (directory as NSString).deletingLastPathComponent)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.hasSuffix("nothing to apply (\(files.count) already applied)\n"))
    }
}
