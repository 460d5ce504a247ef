import FerryTestSupport
import Foundation
import Testing
@testable import FerryMigrations

/// Bad input to the declarative sync rules (core migration 0019), as an app's migration
/// meets it: `ferry migrate` fails naming the file, PostgreSQL's message names the table
/// and column, and the database is as it was before the file.
@Suite struct SyncRuleInputTests {
    /// The app's first file, which every case builds on.
    static let tables = """
        CREATE SCHEMA app;
        CREATE TABLE app.lists (id uuid PRIMARY KEY, owner_id uuid NOT NULL REFERENCES ferry.users, title text NOT NULL);
        SELECT ferry.sync_owned('app.lists', owner => 'owner_id');
        CREATE TABLE app.loose (id uuid PRIMARY KEY, list_id uuid, user_id uuid);
        CREATE TABLE app.keyless (code text, title text);
        """

    /// Applies `tables`, then `file` as 0002_bad.sql; returns the failure.
    private func failure(_ file: String) throws -> (MigrationFailure, ScratchDatabase) {
        let database = try ScratchDatabase.create()
        let fixture = try MigrationFixture(["0001_tables.sql": Self.tables, "0002_bad.sql": file])
        defer { fixture.destroy() }
        let migrator = Migrator(
            databaseURL: database.url, core: try MigrationFile.core(), repeatable: try RepeatableFile.core(),
            app: try AppMigrations.load(directory: fixture.path))
        do {
            _ = try migrator.migrate()
        } catch let error {
            guard case let .migrationFailed(failure) = error else {
                database.drop()
                throw error
            }
            return (failure, database)
        }
        database.drop()
        throw TestEnvironment.Missing(description: "0002_bad.sql was applied")
    }

    /// The database as the first file left it: the rules, the scopes, the policies.
    private func state(_ database: ScratchDatabase) throws -> [String?] {
        try database.column(
            """
            SELECT (SELECT string_agg(table_oid::text || ':' || kind, ',' ORDER BY 1) FROM ferry.sync_rules)
                || ' ' || (SELECT count(*) FROM ferry.access_scopes)
                || ' ' || (SELECT count(*) FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid
                            JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'app')
                || ' ' || (SELECT count(*) FROM ferry.synced_tables)
                || ' ' || (SELECT string_agg(version::text, ',' ORDER BY version) FROM ferry.schema_migrations WHERE track = 'app')
            """)
    }

    @Test func enablingATableWithoutAPrimaryKeyIdNamesTheTable() throws {
        let (failure, database) = try failure("SELECT ferry.sync_owned('app.keyless', owner => 'code');\n")
        defer { database.drop() }
        #expect(failure.fileName == "0002_bad.sql")
        #expect(failure.description.contains("app.keyless.code (named as owner) must be uuid"), "\(failure)")
        let (keyless, other) = try self.failure(
            "ALTER TABLE app.keyless ADD COLUMN owner_id uuid;\n"
                + "SELECT ferry.sync_owned('app.keyless', owner => 'owner_id');\n")
        defer { other.drop() }
        #expect(
            keyless.description.contains("app.keyless needs a single-column primary key named id to be synced (has none)"),
            "\(keyless)")
        #expect(keyless.description.contains("0002_bad.sql was rolled back"))
        #expect(try state(other) == ["app.lists:owned 0 1 1 1"])
        #expect(
            try other.column("SELECT count(*) FROM pg_attribute WHERE attrelid = 'app.keyless'::regclass AND attname = 'owner_id'")
                == ["0"], "the file's own ALTER TABLE was rolled back with it")
    }

    @Test func aRuleNamingAMissingColumnNamesTableAndColumn() throws {
        let (failure, database) = try failure("SELECT ferry.sync_child('app.loose', parent => 'lists_id');\n")
        defer { database.drop() }
        #expect(failure.description.contains("app.loose has no column lists_id (named as parent)"), "\(failure)")
        #expect(failure.description.contains("The columns of app.loose are: id, list_id, user_id."))
        let (readOnly, other) = try self.failure("SELECT ferry.sync_owned('app.lists2', owner => 'owner_id');\n")
        defer { other.drop() }
        #expect(readOnly.description.contains("relation \"app.lists2\" does not exist"), "\(readOnly)")
        #expect(try state(database) == ["app.lists:owned 0 1 1 1"])
    }

    @Test func aRuleAppliedTwiceIsRefusedNamingTheTable() throws {
        let (failure, database) = try failure("SELECT ferry.sync_owned('app.lists', owner => 'owner_id');\n")
        defer { database.drop() }
        #expect(
            failure.description.contains("app.lists already has a sync rule (owned, by owner_id): a table has one rule"),
            "\(failure)")
        #expect(failure.description.contains("hint: To state it differently, SELECT ferry.drop_sync_rules('app.lists') first"))
        #expect(try state(database) == ["app.lists:owned 0 1 1 1"])
    }

    @Test func aMembershipRuleWithoutAForeignKeyToItsScopeIsRefused() throws {
        let (failure, database) = try failure(
            "SELECT ferry.sync_members('app.loose', scope => 'list_id', member => 'user_id');\n")
        defer { database.drop() }
        #expect(
            failure.description.contains(
                "app.loose.list_id (named as scope) is not a foreign key: a membership rule needs a foreign key to the table it shares"),
            "\(failure)")
        #expect(failure.description.contains("hint: ALTER TABLE app.loose ADD FOREIGN KEY (list_id) REFERENCES"))
        #expect(try state(database) == ["app.lists:owned 0 1 1 1"])
    }

    @Test func aTableWithPoliciesOfItsOwnIsRefusedNamingThem() throws {
        let (failure, database) = try failure(
            """
            ALTER TABLE app.loose ADD FOREIGN KEY (list_id) REFERENCES app.lists;
            ALTER TABLE app.loose ENABLE ROW LEVEL SECURITY;
            CREATE POLICY loose_all ON app.loose USING (true);
            SELECT ferry.sync_child('app.loose', parent => 'list_id');
            """)
        defer { database.drop() }
        #expect(
            failure.description.contains(
                "app.loose has row level security policies of its own (loose_all): the rules write every policy of a table"),
            "\(failure)")
        #expect(try state(database) == ["app.lists:owned 0 1 1 1"])
    }

    /// Stating a rule again: drop it, then state the new one, in one migration; a shared
    /// table's rule cannot be dropped from under its members rule. A column a later
    /// migration adds to a ruled table is granted by the same run.
    @Test func aRuleIsRestatedByDroppingItAndAColumnAddedLaterIsGranted() throws {
        let database = try ScratchDatabase.create()
        defer { database.drop() }
        let fixture = try MigrationFixture([
            "0001_tables.sql": Self.tables,
            "0002_share.sql": """
            CREATE TABLE app.list_members (id uuid PRIMARY KEY, list_id uuid NOT NULL REFERENCES app.lists,
                                           user_id uuid NOT NULL REFERENCES ferry.users);
            SELECT ferry.drop_sync_rules('app.lists');
            SELECT ferry.sync_owned('app.lists', owner => 'owner_id', fixed => ARRAY['title']);
            SELECT ferry.sync_members('app.list_members', scope => 'list_id', member => 'user_id');
            """,
            "0003_more.sql": "ALTER TABLE app.lists ADD COLUMN color text NOT NULL DEFAULT 'blue';\n",
        ])
        defer { fixture.destroy() }
        _ = try Migrator(
            databaseURL: database.url, core: try MigrationFile.core(), repeatable: try RepeatableFile.core(),
            app: try AppMigrations.load(directory: fixture.path)
        ).migrate()
        #expect(
            try database.column("SELECT ferry.rules_granted('app.lists')::text") == [
                #"{"delete": false, "insert": ["id", "owner_id", "title", "color"], "select": true, "update": ["is_deleted", "color"]}"#
            ])
        #expect(
            try database.column("SELECT polname FROM pg_policy WHERE polrelid = 'app.lists'::regclass ORDER BY 1")
                == ["ferry_rules_create", "ferry_rules_read", "ferry_rules_write"], "shared: members read and write")

        try fixture.write("0004_unshare.sql", "SELECT ferry.drop_sync_rules('app.lists');\n")
        let error = #expect(throws: MigrationError.self) {
            try Migrator(
                databaseURL: database.url, core: try MigrationFile.core(), repeatable: try RepeatableFile.core(),
                app: try AppMigrations.load(directory: fixture.path)
            ).migrate()
        }
        #expect(
            "\(error.map { "\($0)" } ?? "")".contains(
                "app.lists is shared by the members rule of app.list_members: drop that rule first"))
    }
}
