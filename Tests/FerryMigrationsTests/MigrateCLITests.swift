import Foundation
import Testing
import FerryTestSupport
@testable import Ferry
@testable import FerryMigrations

/// `ferry migrate` as a user runs it: the built binary, a scratch database named by
/// FERRY_DATABASE_MIGRATION_URL, exit codes and output.
@Suite struct MigrateCLITests {
    /// The study example's migrations directory.
    static let study = ExampleApp.study.migrationsDirectory.path

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
        let core = try MigrationFile.core()
        let repeatable = try RepeatableFile.core()
        let ferry = core.count + repeatable.count

        let dry = try FerryProcess.run(["migrate", "--dry-run", "--dir", fixture.path], environment: env)
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdout.contains("would apply core 0001_ferry_core.sql\n"))
        #expect(dry.stdout.contains("would apply app 0001_create.sql\nwould apply app 0002_fill.sql\n"))
        #expect(dry.stdout.contains("dry run: \(ferry + 2) migrations would be applied; nothing was run"))
        #expect(try database.column("SELECT to_regclass('public.items')::text") == [nil])

        let apply = try FerryProcess.run(["migrate", "--dir", fixture.path], environment: env)
        #expect(apply.status == 0, "\(apply.stderr)")
        let lines = apply.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == ferry + 4)
        #expect(
            lines.first == "migrating \(database.url.replacingOccurrences(of: ":\(password)@", with: ":***@")) "
                + "(Ferry's \(core.count) + \(repeatable.count) repeatable and 2 files in \(fixture.path))")
        // Ferry's own first, in version order, then its repeatable files, then the app's.
        let applied = lines.dropFirst().dropLast().map { $0.replacingOccurrences(of: #" in \d+ ms$"#, with: "", options: .regularExpression) }
        #expect(
            applied == core.map { "applied core \($0.fileName)" } + repeatable.map { "applied core \($0.name)" } + [
                "applied app 0001_create.sql", "applied app 0002_fill.sql",
            ])
        #expect(
            lines.last?.range(of: #"^applied \#(ferry + 2) migrations in \d+ ms \(0 already applied\)$"#, options: .regularExpression) != nil)
        #expect(!apply.stdout.contains(":\(password)@") && !apply.stderr.contains(":\(password)@"))

        let again = try FerryProcess.run(["migrate", "apply", "--dir", fixture.path], environment: env)
        #expect(again.status == 0)
        #expect(again.stdout.hasSuffix("nothing to apply (\(ferry + 2) already applied)\n"))

        try fixture.write("0003_broken.sql", "-- three\nINSERT INTO public.items VALUES (3);\nINSERT INTO public.items VALUES (3);\n")
        let failed = try FerryProcess.run(["migrate", "--dir", fixture.path], environment: env)
        #expect(failed.status == 1)
        #expect(failed.stderr.hasPrefix("ferry: migration 0003_broken.sql failed"))
        #expect(failed.stderr.contains("duplicate key value violates unique constraint \"items_pkey\""))
        #expect(failed.stderr.contains("detail: Key (id)=(3) already exists."))
        #expect(try database.column("SELECT count(*) FROM public.items") == ["1"])

        let status = try FerryProcess.run(["migrate", "status", "--dir", fixture.path], environment: env)
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("\napp (\(fixture.path))\n"))
        #expect(status.stdout.contains("  0003_broken.sql  pending\n"))
        #expect(
            status.stdout.hasSuffix(
                "core: \(core.count) applied, 0 pending, 0 changed, 0 missing\n"
                    + "core repeatable: \(repeatable.count) current, 0 due, 0 missing\n"
                    + "app: 2 applied, 1 pending, 0 changed, 0 missing\n"))

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

        // The configuration names the directory when --dir does not.
        let configured = try FerryProcess.run(
            ["migrate", "status"], environment: unreachable.merging(["FERRY_DATABASE_MIGRATIONS_DIR": "/nonexistent/configured"]) { $1 })
        #expect(configured.stderr == "ferry: migrations directory /nonexistent/configured: it does not exist\n")

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
        let appliedLines = outcomes.flatMap { $0.stdout.split(separator: "\n") }.filter { $0.hasPrefix("applied app 000") }
        #expect(appliedLines.count == 2)
        #expect(
            outcomes.contains {
                $0.stdout.hasSuffix(
                    "nothing to apply (\(try! MigrationFile.core().count + (try! RepeatableFile.core()).count + 2) already applied)\n")
            })
        #expect(try database.column("SELECT count(*) FROM public.log") == ["1"])
    }

    /// The README's way: Ferry's own migrations from the binary, the study example's from
    /// its directory; and without a directory, Ferry's own alone.
    @Test func ferryAndTheStudyExampleApplyToAFreshDatabase() throws {
        let database = try ScratchDatabase.create()
        defer { database.drop() }
        let env = ["FERRY_DATABASE_MIGRATION_URL": database.url]
        let core = try MigrationFile.core()

        let alone = try FerryProcess.run(["migrate"], environment: env)
        #expect(alone.status == 0, "\(alone.stdout)\n\(alone.stderr)")
        #expect(alone.stdout.contains(", no app directory)\n"))
        #expect(alone.stdout.hasSuffix("(0 already applied; no app directory given, so only Ferry's own)\n"))
        #expect(try database.column("SELECT to_regclass('ferry.users')::text") == ["ferry.users"])
        #expect(try database.column("SELECT to_regnamespace('app')::text") == [nil])

        let files = try MigrationDirectory.load(path: Self.study)
        let apply = try FerryProcess.run(["migrate", "--dir", Self.study], environment: env)
        #expect(apply.status == 0, "\(apply.stdout)\n\(apply.stderr)")
        #expect(apply.stdout.contains("applied app 0002_example_app.sql in "))
        #expect(!apply.stdout.contains("applied core"))
        #expect(
            try database.column("SELECT track || ' ' || count(*) FROM ferry.schema_migrations GROUP BY track ORDER BY track")
                == ["app \(files.count)", "core \(core.count)"])
        #expect(try database.column("SELECT count(*) FROM ferry.sync_resources") == ["8"])  // classes included

        let again = try FerryProcess.run(["migrate"], environment: env.merging(["FERRY_DATABASE_MIGRATIONS_DIR": Self.study]) { $1 })
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.hasSuffix("nothing to apply (\(core.count + (try! RepeatableFile.core()).count + files.count) already applied)\n"))
    }

    @Test func anAppMigrationThatChangesSchemaFerryIsRefusedNamingTheFile() throws {
        let database = try ScratchDatabase.create()
        defer { database.drop() }
        let fixture = try MigrationFixture([
            "0001_mine.sql": "CREATE TABLE public.mine (id int PRIMARY KEY);\n",
            "0002_sneaky.sql": "CREATE FUNCTION ferry.helper() RETURNS int LANGUAGE sql RETURN 1;\n"
                + "ALTER TABLE ferry.users ADD COLUMN nickname text;\n",
        ])
        defer { fixture.destroy() }
        let refused = try FerryProcess.run(["migrate", "--dir", fixture.path], environment: ["FERRY_DATABASE_MIGRATION_URL": database.url])
        #expect(refused.status == 1)
        #expect(refused.stderr.hasPrefix("ferry: app migration 0002_sneaky.sql changes schema ferry, which belongs to Ferry"))
        #expect(refused.stderr.contains("  function ferry.helper() created\n"))
        #expect(refused.stderr.contains("  table ferry.users altered\n"))
        #expect(try database.column("SELECT count(*) FROM pg_attribute WHERE attrelid = 'ferry.users'::regclass AND attname = 'nickname'") == ["0"])
        #expect(try database.column("SELECT to_regprocedure('ferry.helper()')::text") == [nil])
        #expect(try database.column("SELECT name FROM ferry.schema_migrations WHERE track = 'app'") == ["0001_mine.sql"])
    }

    /// `ferry migrate` checks the schema it leaves and warns; the run itself succeeds.
    @Test func migrateWarnsAboutWhatFerryCheckWouldFind() throws {
        let database = try ScratchDatabase.create()
        defer { database.drop() }
        let fixture = try MigrationFixture([
            "0001_open.sql": """
            CREATE SCHEMA app;
            CREATE TABLE app.open_notes (id uuid PRIMARY KEY, body text);
            SELECT ferry.enable_sync('app.open_notes');
            GRANT USAGE ON SCHEMA app TO ferry_app;
            GRANT SELECT, INSERT (id, body), UPDATE (body, is_deleted) ON app.open_notes TO ferry_app;
            """
        ])
        defer { fixture.destroy() }
        let apply = try FerryProcess.run(["migrate", "--dir", fixture.path], environment: ["FERRY_DATABASE_MIGRATION_URL": database.url])
        #expect(apply.status == 0, "\(apply.stderr)")
        #expect(
            apply.stdout.contains("warning: error   app.open_notes: Row Level Security is off, so every user reads and writes every row\n"),
            "\(apply.stdout)")
        #expect(apply.stdout.contains("warning: 1 error, 0 warnings in 1 synced table; `ferry check` says more"))
    }
}
