import Ferry
import FerryHTTPTestSupport
import FerryPostgres
import FerryTestSupport
import Foundation
import Testing
@testable import FerryMigrations

/// A database migrated before Ferry's schema and the app's were split (one sequence,
/// 0001–0015, in one history) upgrades with no data lost and no file applied again.
@Suite struct LegacyUpgradeTests {
    /// The SHA-256 of each file of the one sequence as it was shipped (at 0b5ba6e).
    static let shipped: [Int: String] = [
        1: "536e127aa4543e8417919922538749fb42306ae5ce32089b29fa06f551a23727",
        2: "089c255d856269d9fe5834d882e25dec6ff0ebc5713e4ce107b9cba26333d26f",
        3: "cd5617815836d9bf1be3d696c8195658295966ce7bc18aeedc71ff5a537e9843",
        4: "36dad2877476267bc7b94c6a56cbf2c7554e3e673e1dbd71e3e3dba88b36a7aa",
        5: "1e42578c9de798391248bbf582b3cba60f925746a6db1a1190217f359f5f6814",
        6: "95b0a91ebb416dae13fa02c6ec66f279b9e68fa768a7f16b750d3d84dd787bf9",
        7: "e45221d99fb41bf7863992f2a55860003fd76a3b35e708ca1572bf41e7d093bd",
        8: "be910e89e54052220c21a020646bc2e2a720365eb681fd2b1a7e4249609af3f4",
        9: "f88ce634f3392d97065b9af30221c47b7d1fc9f80b84d46a86738797ff1ec4ad",
        10: "68a15f752109bbaf17ada444c1b4e17ba227c3ebb91f4151238fc88dde840e95",
        11: "777016829984d15e3f783b5677dbc3b2c63aa8623eec310c6c01b96052a19140",
        12: "6dcec126b846f3e605683c6b5c2c0a4f9bc59f6e4b2d65f54a1bb18848b79a78",
        13: "4dd35516606540581cf12d9b599d7879b463f92a3cf3d292e43c769d7cfb79eb",
        14: "e120609d0dabbfbd928db5712ad74cd0e51e421b34f100d1a5e324f22933ba66",
        15: "c609c96942839980d1243bd311570617084b8ef7ba182ed5fe4c969425262e2c",
    ]

    /// The one sequence as shipped: Ferry's files and the study app's are the same bytes
    /// today, so they come from `migrations/` and `examples/study/migrations`; the two
    /// that held both parts are kept as they were in `Fixtures/legacy-0015`.
    static func legacyFiles() throws -> [MigrationFile] {
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/legacy-0015")
        let files =
            try MigrationFile.core().filter { $0.version <= 15 && $0.version != 4 && $0.version != 15 }
            + ExampleApp.study.migrations().files.filter { [2, 5, 13, 14].contains($0.version) }
            + MigrationDirectory.load(path: fixtures.path)
        let sorted = files.sorted { $0.version < $1.version }
        #expect(sorted.map(\.version) == Array(1...15))
        #expect(sorted.map { shipped[$0.version] } == sorted.map(\.checksum), "not the files as shipped")
        return sorted
    }

    /// Migrates `database` the way `ferry migrate` did before the split: each file in a
    /// transaction, the synced tables' triggers regenerated, one row per file in the
    /// history table of that time (no track column).
    static func migrateAsBefore(_ database: ScratchDatabase) throws {
        let connection = try database.connect()
        defer { connection.close() }
        for file in try legacyFiles() {
            try connection.transaction { connection in
                try connection.execute(file.script)
                if try connection.query("SELECT to_regprocedure('ferry.refresh_sync_triggers()') IS NOT NULL AS p").first?.bool("p") == true {
                    _ = try connection.query("SELECT ferry.refresh_sync_triggers()")
                }
                try connection.execute(
                    """
                    CREATE TABLE IF NOT EXISTS ferry.schema_migrations (
                        version     int         PRIMARY KEY,
                        name        text        NOT NULL,
                        checksum    text        NOT NULL,
                        applied_at  timestamptz NOT NULL DEFAULT now(),
                        duration_ms int         NOT NULL
                    )
                    """)
                _ = try connection.query(
                    "INSERT INTO ferry.schema_migrations (version, name, checksum, applied_at, duration_ms) VALUES ($1::int, $2, $3, now() - interval '1 day' + $1::int * interval '1 minute', $1::int)",
                    [String(file.version), file.fileName, file.checksum])
            }
        }
    }

    /// Users, a shared set with terms (one deleted), a folder, a removed collaborator: the
    /// kinds of row the upgrade must leave exactly as they were.
    static func fill(_ database: ScratchDatabase) throws {
        let connection = try database.connect()
        defer { connection.close() }
        try connection.execute(
            """
            SELECT ferry.create_user('ana', 'ana-password-1'), ferry.create_user('ben', 'ben-password-1'),
                   ferry.create_user('cyd', 'cyd-password-1');
            BEGIN;
            SELECT set_config('ferry.user_id', (SELECT id::text FROM ferry.users WHERE name = 'ana'), true);
            INSERT INTO app.study_sets (id, title) VALUES ('00000000-0000-4000-8000-000000000001', 'Spanish');
            INSERT INTO app.terms (set_id, word, definition, rank)
                 SELECT '00000000-0000-4000-8000-000000000001', 'w' || i, 'd' || i, 'U' || lpad(i::text, 4, '0')
                   FROM generate_series(1, 200) i;
            UPDATE app.terms SET definition = 'edited' WHERE word = 'w7';
            UPDATE app.terms SET is_deleted = true WHERE word = 'w9';
            INSERT INTO app.folders (id, name) VALUES ('00000000-0000-4000-8000-000000000002', 'School');
            INSERT INTO app.folder_sets (folder_id, set_id)
                 VALUES ('00000000-0000-4000-8000-000000000002', '00000000-0000-4000-8000-000000000001');
            INSERT INTO app.set_collaborators (set_id, user_id)
                 SELECT '00000000-0000-4000-8000-000000000001', id FROM ferry.users WHERE name IN ('ben', 'cyd');
            UPDATE app.set_collaborators SET is_deleted = true WHERE user_id = (SELECT id FROM ferry.users WHERE name = 'cyd');
            COMMIT;
            """)
    }

    /// Every row of every table of `columns`, read through the columns listed there
    /// (hidden sync columns included), as text, by table.
    static func contents(_ database: ScratchDatabase, columns: [String: String]) throws -> [String: [String]] {
        var contents: [String: [String]] = [:]
        for table in columns.keys.sorted() {
            contents[table] = try database.column("SELECT t::text FROM (SELECT \(columns[table]!) FROM \(table)) t ORDER BY 1")
                .map { $0 ?? "" }
        }
        return contents
    }

    /// Every table of schemas app and ferry but the history, with its columns as a
    /// select list: the upgrade may add columns (a later core migration does), but
    /// what was there must read the same after it.
    static func columns(_ database: ScratchDatabase) throws -> [String: String] {
        let rows = try database.column(
            """
            SELECT format('%I.%I', n.nspname, c.relname) || ' ' || string_agg(format('%I', a.attname), ', ' ORDER BY a.attnum)
              FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
              JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
             WHERE n.nspname IN ('app', 'ferry') AND c.relkind = 'r' AND c.relname <> 'schema_migrations'
             GROUP BY n.nspname, c.relname ORDER BY 1
            """
        ).compactMap { $0 }
        var columns: [String: String] = [:]
        for row in rows {
            let space = row.firstIndex(of: " ")!
            columns[String(row[..<space])] = String(row[row.index(after: space)...])
        }
        return columns
    }

    @Test func aDatabaseOfTodaysLayoutUpgradesWithNoDataLostAndNoFileAppliedAgain() throws {
        let database = try ScratchDatabase.create(prefix: "ferry_legacy")
        defer { database.drop() }
        try Self.migrateAsBefore(database)
        try Self.fill(database)
        let columns = try Self.columns(database)
        let before = try Self.contents(database, columns: columns)
        #expect(before["app.terms"]?.count == 200)
        let appliedAt = try database.column("SELECT version || ' ' || applied_at FROM ferry.schema_migrations ORDER BY version")

        let core = try MigrationFile.core()
        let study = try ExampleApp.study.migrations()
        let migrator = Migrator(databaseURL: database.url, core: core, app: study)
        let status = try migrator.status().statusReport()
        #expect(status.hasPrefix("ferry.schema_migrations is from before Ferry's migrations and the app's were split"))

        var events: [MigrationEvent] = []
        let summary = try migrator.migrate { events.append($0) }
        #expect(events.first == .dividedLegacyHistory(moved: 4, divided: 2))
        // Only files the old sequence never had run: none of 0001-0015 again.
        let newer =
            core.filter { $0.version > 15 }.map { "core \($0.fileName)" }
            + study.files.filter { $0.version > 15 }.map { "app \($0.fileName)" }
        #expect(summary.applied.map { "\($0.track.rawValue) \($0.fileName)" } == newer)
        #expect(summary.alreadyApplied == 17)
        let after = try Self.contents(database, columns: columns)
        for (table, rows) in before {
            // The app's rows read the same; Ferry's registries may gain rows for what the
            // newer files add (the study app's classes), but lose or change none.
            let kept = table.hasPrefix("ferry.") ? Set(rows).isSubset(of: Set(after[table] ?? [])) : rows == after[table]
            #expect(kept, "the upgrade changed rows of \(table)")
        }

        // Each track holds its own files, each row keeping when it was first applied.
        let rows = try database.column(
            """
            SELECT track || ' ' || version || ' ' || name || ' ' || applied_at FROM ferry.schema_migrations
             WHERE version <= 15 ORDER BY track DESC, version
            """)
        let when = Dictionary(
            uniqueKeysWithValues: appliedAt.compactMap { $0 }.map {
                (Int($0.prefix { $0 != " " })!, String($0.drop { $0 != " " }.dropFirst()))
            })
        let expected =
            core.filter { $0.version <= 15 }.map { "core \($0.version) \($0.fileName) \(when[$0.version]!)" }
            + study.files.filter { $0.version <= 15 }.map { "app \($0.version) \($0.fileName) \(when[$0.version]!)" }
        #expect(rows.compactMap { $0 } == expected)
        #expect(try migrator.migrate().applied.isEmpty)
        #expect(try migrator.status().plans.allSatisfy { $0.changed.isEmpty && $0.missing.isEmpty && $0.pending.isEmpty })

        // And it serves: a collaborator reads the set's terms, the removed one does not.
        let server = try TestServer(database: database)
        defer { server.server.shutdown(); server.app.close() }
        let client = server.client()
        let owner = try database.connect()
        defer { owner.close() }
        for (name, visible) in [("ben", true), ("cyd", false)] {
            let token = try #require(try AuthService.issueToken(name: name, ttlSeconds: 600, connection: owner)).token
            let terms = try client.request("GET", "/v1/terms?limit=1000", headers: [("Authorization", "Bearer \(token)")])
            #expect(terms.status == 200)
            #expect(terms.text.contains("\"word\":\"w7\"") == visible, "\(name): \(terms.text.prefix(200))")
        }
    }

    @Test func aForksOwnFilesMoveToTheAppTrackAndAChangedFerryFileIsRefused() throws {
        let core = try MigrationFile.core()
        let legacy = try Self.legacyFiles().map {
            AppliedMigration(
                track: .core, version: $0.version, fileName: $0.fileName, checksum: $0.checksum,
                appliedAt: "2026-01-01 00:00:00 UTC", durationMs: 1)
        }
        // A fork's own 0016, though Ferry may now have a core 0016 of its own.
        let forked =
            legacy + [
                AppliedMigration(
                    track: .core, version: 16, fileName: "0016_todos.sql", checksum: "ab",
                    appliedAt: "2026-01-02 00:00:00 UTC", durationMs: 1)
            ]
        let split = try LegacyHistory.split(forked, core: core)
        #expect(
            split.rows.filter { $0.track == .app }.map(\.fileName) == [
                "0002_example_app.sql", "0004_study_access_scope.sql", "0005_terms_policy.sql", "0013_indexable_set_policy.sql",
                "0014_children_follow_parent.sql", "0015_study_read_through_scope.sql", "0016_todos.sql",
            ])
        #expect(split.rows.filter { $0.track == .core }.map(\.fileName) == core.filter { $0.version <= 15 }.map(\.fileName))

        var edited = legacy
        edited[2].checksum = String(repeating: "0", count: 64)  // 0003_ferry_writes.sql, changed by hand
        let error = #expect(throws: MigrationError.self) { try LegacyHistory.split(edited, core: core) }
        let text = error.map { "\($0)" } ?? ""
        #expect(text.contains("records 0003_ferry_writes.sql (version 3) with checksum 000000000000, which is not a file Ferry shipped"))
        #expect(text.contains("nothing was changed"))
    }

    /// The split's frozen checksums are those of the files: the shipped 0004 and 0015, and
    /// the study app's parts of them in examples/study/migrations; and its versions of
    /// Ferry's are the shipped files' that are not the study app's.
    @Test func theFrozenChecksumsAreTheFiles() throws {
        let study = Dictionary(uniqueKeysWithValues: try ExampleApp.study.migrations().files.map { ($0.fileName, $0) })
        for divided in LegacyHistory.dividedFiles {
            #expect(Self.shipped[divided.version] == divided.legacyChecksum)
            #expect(study[divided.appName]?.checksum == divided.appChecksum)
        }
        #expect(LegacyHistory.legacyCoreVersions == Set(1...15).subtracting([2, 5, 13, 14]))
        #expect(try Self.legacyFiles().count == 15)
    }
}
