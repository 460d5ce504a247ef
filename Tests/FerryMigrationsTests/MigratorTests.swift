import Foundation
import Testing
import FerryTestSupport
@testable import Ferry
@testable import FerryMigrations

/// The migrator against a real PostgreSQL, each test in a scratch database of its own.
@Suite struct MigratorTests {
    static let threeFiles = [
        "0001_create.sql": "CREATE TABLE public.items (id int PRIMARY KEY, label text);\n",
        "0002_fill.sql": "-- fill\nINSERT INTO public.items VALUES (1, 'one');\nINSERT INTO public.items VALUES (2, 'two');\n",
        "0003_index.sql": "CREATE INDEX items_label_idx ON public.items (label);\n",
    ]

    private func migrator(_ database: ScratchDatabase, _ fixture: MigrationFixture) throws -> Migrator {
        try fixture.migrator(database.url)
    }

    @Test func freshDatabaseAppliesEveryFileThenNothing() throws {
        let database = try ScratchDatabase.create()
        defer { database.drop() }
        let fixture = try MigrationFixture(Self.threeFiles)
        defer { fixture.destroy() }
        let migrator = try migrator(database, fixture)

        var events: [MigrationEvent] = []
        let first = try migrator.migrate { events.append($0) }
        #expect(first.applied.map(\.fileName) == ["0001_create.sql", "0002_fill.sql", "0003_index.sql"])
        #expect(first.alreadyApplied == 0)
        #expect(events.map(\.line).allSatisfy { $0.hasPrefix("applied app 00") && $0.hasSuffix(" ms") })
        #expect(try database.column("SELECT count(*) FROM public.items") == ["2"])
        #expect(try database.column("SELECT to_regclass('public.items_label_idx')::text") == ["items_label_idx"])

        let rows = try database.column(
            """
            SELECT track || ' ' || version || ' ' || name || ' ' || checksum || ' ' || (duration_ms >= 0) || ' ' || (applied_at <= now())
            FROM ferry.schema_migrations ORDER BY version
            """)
        let files = try MigrationDirectory.load(path: fixture.path)
        #expect(rows == files.map { "app \($0.version) \($0.fileName) \($0.checksum) true true" })

        var again: [MigrationEvent] = []
        let second = try migrator.migrate { again.append($0) }
        #expect(second.applied.isEmpty)
        #expect(second.alreadyApplied == 3)
        #expect(second.line == "nothing to apply (3 already applied)")
        #expect(again.isEmpty)
        #expect(try database.column("SELECT count(*) FROM public.items") == ["2"])
    }

    /// A synced table's update trigger is generated from its columns (migration 0011), so
    /// the migrator regenerates it inside every migration's transaction: after a migration
    /// that adds one column and renames another, updates work and record both by name.
    @Test func syncTriggersFollowEachMigration() throws {
        let database = try ScratchDatabase.create()
        defer { database.drop() }
        let fixture = try MigrationFixture([
            "0100_reshape_terms.sql": """
            ALTER TABLE app.terms ADD COLUMN note text;
            ALTER TABLE app.terms RENAME COLUMN definition TO meaning;
            """
        ])
        defer { fixture.destroy() }
        let study = try ExampleApp.study.migrations()
        let extra = try MigrationDirectory.load(path: fixture.path)
        _ = try Migrator(
            databaseURL: database.url, core: try MigrationFile.core(), repeatable: try RepeatableFile.core(),
            app: AppMigrations(directory: "study+", files: study.files + extra)
        ).migrate()

        let source =
            try database.column(
                """
                SELECT prosrc FROM pg_proc WHERE oid = format('ferry.sync_update_%s()', 'app.terms'::regclass::oid)::regprocedure
                """
            ).first ?? nil
        // A field is compared as `NEW.x::pg_catalog.text` (text, uuid, integers...) or
        // inside `to_jsonb(NEW.x)` (other types): either way the column's name then `::` or `)`.
        func names(_ column: String) -> Bool {
            source?.contains("NEW.\(column)::") == true || source?.contains("NEW.\(column))") == true
        }
        #expect(names("note"))
        #expect(names("meaning"))
        #expect(!names("definition"))
        let revisions = try database.column(
            """
            WITH s AS (INSERT INTO app.study_sets (creator_id, title)
                       VALUES (ferry.create_user('mig', 'mig-password-123'), 's') RETURNING id),
                 t AS (INSERT INTO app.terms (set_id, word, meaning, rank) SELECT id, 'w', 'm', '0001V' FROM s RETURNING id)
            SELECT id::text FROM t
            """)
        let id = try #require(revisions.first ?? nil)
        #expect(
            try database.column(
                "UPDATE app.terms SET note = 'n', meaning = 'm2' WHERE id = '\(id)' RETURNING _ferry_field_revisions::text")
                == [#"{"note": 2, "meaning": 2}"#])
    }

    @Test func newFilesAreAppliedOnALaterRun() throws {
        let database = try ScratchDatabase.create()
        defer { database.drop() }
        let fixture = try MigrationFixture(["0001_create.sql": Self.threeFiles["0001_create.sql"]!])
        defer { fixture.destroy() }
        _ = try migrator(database, fixture).migrate()
        try fixture.write("0002_fill.sql", Self.threeFiles["0002_fill.sql"]!)
        let summary = try migrator(database, fixture).migrate()
        #expect(summary.applied.map(\.fileName) == ["0002_fill.sql"])
        #expect(summary.alreadyApplied == 1)
    }

    @Test func failingFileRollsBackAndNamesFileLineAndMessage() throws {
        let database = try ScratchDatabase.create()
        defer { database.drop() }
        let fixture = try MigrationFixture([
            "0001_create.sql": "CREATE TABLE public.items (id int PRIMARY KEY);\n",
            // Line 1 and 2 succeed inside the transaction and must be rolled back with it.
            "0002_broken.sql": "CREATE TABLE public.partial (id int);\nINSERT INTO public.items VALUES (1);\nSELEC 'é✓' FROM nowhere;\n",
            "0003_after.sql": "CREATE TABLE public.after (id int);\n",
        ])
        defer { fixture.destroy() }

        var events: [MigrationEvent] = []
        let error = #expect(throws: MigrationError.self) {
            try migrator(database, fixture).migrate { events.append($0) }
        }
        guard case let .migrationFailed(failure)? = error else {
            Issue.record("expected migrationFailed, got \(String(describing: error))")
            return
        }
        #expect(failure.fileName == "0002_broken.sql")
        #expect(failure.location?.line == 3)
        #expect(failure.location?.column == 1)
        #expect(failure.error.sqlState == "42601")
        let text = failure.description
        #expect(text.contains("migration 0002_broken.sql failed at line 3"))
        #expect(text.contains("syntax error at or near \"SELEC\""))
        #expect(text.contains("3 | SELEC 'é✓' FROM nowhere;"))
        #expect(
            events == [
                .applied(
                    track: .app, fileName: "0001_create.sql",
                    durationMs: events.first.flatMap {
                        if case let .applied(_, _, ms) = $0 { ms } else { nil }
                    } ?? -1)
            ])

        #expect(try database.column("SELECT version::text FROM ferry.schema_migrations ORDER BY version") == ["1"])
        #expect(try database.column("SELECT count(*) FROM public.items") == ["0"])
        #expect(try database.column("SELECT to_regclass('public.partial')::text") == [nil])
        #expect(try database.column("SELECT to_regclass('public.after')::text") == [nil])
    }

    @Test func errorPositionAfterMultibyteTextOnTheSameLine() throws {
        let database = try ScratchDatabase.create()
        defer { database.drop() }
        // "n" of nosuchcolumn is scalar 22 of its line; counting bytes would say 32, Swift Characters 21.
        let fixture = try MigrationFixture(["0001_x.sql": "-- ✓✓\nSELECT 'e\u{301}✓✓✓🚀', 1 + nosuchcolumn;\n"])
        defer { fixture.destroy() }
        let error = #expect(throws: MigrationError.self) { try migrator(database, fixture).migrate() }
        guard case let .migrationFailed(failure)? = error else {
            Issue.record("expected migrationFailed, got \(String(describing: error))")
            return
        }
        #expect(failure.location?.line == 2)
        #expect(failure.location?.column == 22)
        #expect(failure.error.message == "column \"nosuchcolumn\" does not exist")
    }

    @Test func changedFileIsRefusedBeforeAnythingRuns() throws {
        let database = try ScratchDatabase.create()
        defer { database.drop() }
        let fixture = try MigrationFixture(["0001_create.sql": Self.threeFiles["0001_create.sql"]!])
        defer { fixture.destroy() }
        _ = try migrator(database, fixture).migrate()
        let before = try MigrationDirectory.load(path: fixture.path)[0].checksum

        try fixture.write("0001_create.sql", "CREATE TABLE public.items (id bigint PRIMARY KEY);\n")
        try fixture.write("0002_fill.sql", Self.threeFiles["0002_fill.sql"]!)
        let after = try MigrationDirectory.load(path: fixture.path)[0].checksum
        let error = #expect(throws: MigrationError.self) { try migrator(database, fixture).migrate() }
        guard case let .checksumMismatch(changed)? = error else {
            Issue.record("expected checksumMismatch, got \(String(describing: error))")
            return
        }
        #expect(changed == [.init(fileName: "0001_create.sql", appliedChecksum: before, currentChecksum: after)])
        let text = "\(error!)"
        #expect(text.contains("0001_create.sql: applied \(before.prefix(12)), now \(after.prefix(12))"))
        #expect(text.contains("nothing was run"))
        #expect(try database.column("SELECT count(*) FROM ferry.schema_migrations") == ["1"])
        #expect(try database.column("SELECT count(*) FROM public.items") == ["0"])
    }

    @Test func statusShowsAppliedPendingChangedAndMissing() throws {
        let database = try ScratchDatabase.create()
        defer { database.drop() }
        let fixture = try MigrationFixture([
            "0001_a.sql": "SELECT 1;", "0002_b.sql": "SELECT 2;", "0003_c.sql": "SELECT 3;",
        ])
        defer { fixture.destroy() }
        #expect(try migrator(database, fixture).status().statusReport().hasSuffix("app: 0 applied, 3 pending, 0 changed, 0 missing"))
        _ = try migrator(database, fixture).migrate()
        try fixture.write("0002_b.sql", "SELECT 22;")
        try fixture.remove("0003_c.sql")
        try fixture.write("0004_d.sql", "SELECT 4;")

        let lines = try migrator(database, fixture).status().statusReport().split(separator: "\n").map(String.init)
        #expect(lines.count == 8)
        #expect(lines[0] == "core (built into ferry)")
        #expect(lines[1] == "app (\(fixture.path))")
        #expect(lines[2].range(of: #"^  0001_a\.sql  applied \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(\d+ ms\)$"#, options: .regularExpression) != nil)
        #expect(lines[3].hasPrefix("  0002_b.sql  changed (applied "))
        #expect(lines[4].hasPrefix("  0003_c.sql  missing (applied "))
        #expect(lines[5] == "  0004_d.sql  pending")
        #expect(lines[6] == "core: 0 applied, 0 pending, 0 changed, 0 missing")
        #expect(lines[7] == "app: 1 applied, 1 pending, 1 changed, 1 missing")
        // Status changes nothing.
        #expect(try database.column("SELECT count(*) FROM ferry.schema_migrations") == ["3"])
    }

    @Test func missingFileWarnsButDoesNotFail() throws {
        let database = try ScratchDatabase.create()
        defer { database.drop() }
        let fixture = try MigrationFixture(["0001_a.sql": "SELECT 1;", "0002_b.sql": "SELECT 2;"])
        defer { fixture.destroy() }
        _ = try migrator(database, fixture).migrate()
        try fixture.remove("0001_a.sql")
        try fixture.write("0003_c.sql", "SELECT 3;")
        var events: [MigrationEvent] = []
        let summary = try migrator(database, fixture).migrate { events.append($0) }
        #expect(summary.applied.map(\.fileName) == ["0003_c.sql"])
        #expect(summary.missing.map(\.fileName) == ["0001_a.sql"])
        #expect(events.first?.line.hasPrefix("warning: app 0001_a.sql (version 1) was applied at ") == true)
        #expect(summary.line.hasSuffix("(1 already applied, 1 missing)"))
    }

    /// A new app's first migration against a database another app migrated (the demo's, as
    /// `ferry init` names it by default) is refused before anything runs, naming the way out.
    @Test func anotherAppsDatabaseIsRefusedBeforeAnythingRuns() throws {
        let database = try ScratchDatabase.create()
        defer { database.drop() }
        let demo = try MigrationFixture([
            "0002_example_app.sql": "CREATE SCHEMA app; CREATE TABLE app.sets (id int);", "0003_more.sql": "SELECT 3;",
        ])
        defer { demo.destroy() }
        _ = try migrator(database, demo).migrate()
        let mine = try MigrationFixture(["0001_first_tables.sql": "CREATE TABLE public.mine (id int);"])
        defer { mine.destroy() }
        for dryRun in [true, false] {
            do {
                _ = try migrator(database, mine).migrate(dryRun: dryRun)
                Issue.record("another app's database was migrated (dry run: \(dryRun))")
            } catch {
                let text = "\(error)"
                #expect(text.hasPrefix("refusing to migrate: this database holds another app's migrations (2 applied: "), "\(text)")
                #expect(text.contains("0002_example_app.sql, 0003_more.sql"))
                #expect(text.contains("none of them in \(mine.path), whose 0001_first_tables.sql is older than them"))
                #expect(text.contains("--database NAME"))
            }
        }
        #expect(try database.column("SELECT to_regclass('public.mine')::text") == [nil])
        #expect(try database.column("SELECT count(*) FROM ferry.schema_migrations") == ["2"])
        // The demo's own directory, with a file added, goes on as before.
        try demo.write("0004_next.sql", "SELECT 4;")
        #expect(try migrator(database, demo).migrate().applied.map(\.fileName) == ["0004_next.sql"])
    }

    @Test func dryRunAppliesNothing() throws {
        let database = try ScratchDatabase.create()
        defer { database.drop() }
        let fixture = try MigrationFixture(Self.threeFiles)
        defer { fixture.destroy() }
        var events: [MigrationEvent] = []
        let summary = try migrator(database, fixture).migrate(dryRun: true) { events.append($0) }
        #expect(summary.wouldApply.map(\.fileName) == ["0001_create.sql", "0002_fill.sql", "0003_index.sql"])
        #expect(summary.applied.isEmpty)
        #expect(
            events.map(\.line) == [
                "would apply app 0001_create.sql", "would apply app 0002_fill.sql", "would apply app 0003_index.sql",
            ])
        #expect(try database.column("SELECT to_regclass('ferry.schema_migrations')::text") == [nil])
        #expect(try database.column("SELECT to_regclass('public.items')::text") == [nil])

        _ = try migrator(database, fixture).migrate()
        let after = try migrator(database, fixture).migrate(dryRun: true)
        #expect(after.wouldApply.isEmpty)
        #expect(after.line == "dry run: nothing to apply (3 already applied)")
    }

    @Test func fileWithItsOwnCommitIsRefusedBeforeAnythingRuns() throws {
        let database = try ScratchDatabase.create()
        defer { database.drop() }
        let fixture = try MigrationFixture([
            "0001_fine.sql": "CREATE TABLE public.t (id int);\n",
            "0002_tx.sql": "BEGIN;\nCREATE TABLE public.u (id int);\nCOMMIT;\n",
        ])
        defer { fixture.destroy() }
        let error = #expect(throws: MigrationError.self) { try migrator(database, fixture).migrate() }
        guard case let .transactionStatement(fileName, line, statement)? = error else {
            Issue.record("expected transactionStatement, got \(String(describing: error))")
            return
        }
        #expect((fileName, line, statement) == ("0002_tx.sql", 1, "BEGIN"))
        #expect("\(error!)".contains("0002_tx.sql has a BEGIN statement at line 1 (nothing was run)"))
        #expect(try database.column("SELECT to_regclass('public.t')::text") == [nil])
    }

    /// The safety net behind the scanner: a file that ends its transaction anyway (here
    /// applied directly, bypassing the scan) is reported, not recorded.
    @Test func fileThatCommitsItselfIsReported() throws {
        let database = try ScratchDatabase.create()
        defer { database.drop() }
        let fixture = try MigrationFixture(["0001_tx.sql": "CREATE TABLE public.t (id int);\nCOMMIT;\nCREATE TABLE public.u (id int);\n"])
        defer { fixture.destroy() }
        let migrator = try migrator(database, fixture)
        let connection = try migrator.connect()
        defer { connection.close() }
        let error = #expect(throws: MigrationError.self) {
            try migrator.apply(try #require(migrator.app).files[0], track: .app, on: connection)
        }
        guard case let .transactionControl(fileName)? = error else {
            Issue.record("expected transactionControl, got \(String(describing: error))")
            return
        }
        #expect(fileName == "0001_tx.sql")
        #expect(try database.column("SELECT to_regclass('ferry.schema_migrations')::text") == [nil])
    }

    @Test func unreachableDatabaseIsAClearError() throws {
        let migrator = Migrator(databaseURL: "postgresql://nobody:hunter2@127.0.0.1:1/none?connect_timeout=2", core: [], app: nil)
        let error = #expect(throws: MigrationError.self) { try migrator.migrate() }
        let text = error.map { "\($0)" } ?? ""
        #expect(text.hasPrefix("connecting to the database failed: "))
        #expect(!text.contains("hunter2"))
    }

    /// An app file may call Ferry's functions and write its rows (enable sync, declare an
    /// access scope), and change the session's search_path; it may not create, alter or
    /// drop Ferry's objects, which rolls the whole file back and names what it changed.
    @Test func appFilesCallFerryButLeaveItsSchemaAlone() throws {
        let database = try ScratchDatabase.create()
        defer { database.drop() }
        let fixture = try MigrationFixture([
            "0001_notes.sql": """
            SET search_path = ferry, public;
            CREATE SCHEMA app;
            CREATE TABLE app.notes (id uuid PRIMARY KEY, body text NOT NULL DEFAULT '');
            SELECT ferry.enable_sync('app.notes');
            INSERT INTO ferry.access_scopes (scope_table, member_table, member_column) VALUES ('app.notes', 'app.notes', 'id');
            """,
            "0002_grant.sql": """
            CREATE TABLE app.more (id int);
            GRANT EXECUTE ON FUNCTION ferry.record_access_grant(uuid, regclass, text) TO ferry_app;
            """,
        ])
        defer { fixture.destroy() }
        let migrator = Migrator(
            databaseURL: database.url, core: try MigrationFile.core(), repeatable: try RepeatableFile.core(),
            app: try AppMigrations.load(directory: fixture.path))
        let error = #expect(throws: MigrationError.self) { try migrator.migrate() }
        guard case let .appTouchesFerrySchema(fileName, objects)? = error else {
            Issue.record("expected appTouchesFerrySchema, got \(String(describing: error))")
            return
        }
        #expect(fileName == "0002_grant.sql")
        #expect(objects == ["function ferry.record_access_grant(p_user uuid, p_scope regclass, p_scope_id text) altered"])
        #expect(try database.column("SELECT name FROM ferry.schema_migrations WHERE track = 'app'") == ["0001_notes.sql"])
        #expect(try database.column("SELECT count(*) FROM ferry.sync_resources") == ["1"])
        #expect(try database.column("SELECT to_regclass('app.more')::text") == [nil])
        #expect(
            try database.column(
                """
                SELECT has_function_privilege('ferry_app', 'ferry.record_access_grant(uuid, regclass, text)', 'EXECUTE')::text
                """) == ["false"])
    }
}
