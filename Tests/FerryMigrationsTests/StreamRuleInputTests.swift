import FerryTestSupport
import Foundation
import Testing
@testable import FerryMigrations

/// Bad input to `ferry.sync_public` and `ferry.sync_stream` (core 0025), as an app's
/// migration meets it: `ferry migrate` fails naming the file, and the message names
/// the table and column or the name.
@Suite struct StreamRuleInputTests {
    static let tables = """
        CREATE SCHEMA app;
        CREATE TABLE app.lists (id uuid PRIMARY KEY, owner_id uuid NOT NULL REFERENCES ferry.users, title text NOT NULL,
                                shared boolean NOT NULL DEFAULT false);
        SELECT ferry.sync_owned('app.lists', owner => 'owner_id');
        CREATE TABLE app.items (id uuid PRIMARY KEY, list_id uuid NOT NULL REFERENCES app.lists, open boolean NOT NULL DEFAULT true);
        SELECT ferry.sync_child('app.items', parent => 'list_id');
        """

    private func failure(_ file: String) throws -> MigrationFailure {
        let database = try ScratchDatabase.create()
        defer { database.drop() }
        let fixture = try MigrationFixture(["0001_tables.sql": Self.tables, "0002_bad.sql": file])
        defer { fixture.destroy() }
        let migrator = Migrator(
            databaseURL: database.url, core: try MigrationFile.core(), repeatable: try RepeatableFile.core(),
            app: try AppMigrations.load(directory: fixture.path))
        do {
            _ = try migrator.migrate()
        } catch let error {
            guard case let .migrationFailed(failure) = error else { throw error }
            return failure
        }
        throw TestEnvironment.Missing(description: "0002_bad.sql was applied")
    }

    @Test func aPublicFlagMustBeABooleanColumnOfAnOwnedTable() throws {
        let text = try failure("SELECT ferry.sync_public('app.lists', flag => 'title');\n")
        #expect(text.fileName == "0002_bad.sql")
        #expect(text.description.contains("app.lists.title (named as flag) must be boolean, not text"), "\(text)")
        let missing = try failure("SELECT ferry.sync_public('app.lists', flag => 'nope');\n")
        #expect(missing.description.contains("app.lists has no column nope (named as flag)"), "\(missing)")
        let child = try failure("SELECT ferry.sync_public('app.items', flag => 'open');\n")
        #expect(child.description.contains("app.items has no owned rule"), "\(child)")
    }

    @Test func aStreamNeedsAGoodNameAndAnOwnedScope() throws {
        let name = try failure("SELECT ferry.sync_stream('Bad Name', scope => 'app.lists');\n")
        #expect(name.description.contains("is not a stream name"), "\(name)")
        let child = try failure("SELECT ferry.sync_stream('item', scope => 'app.items');\n")
        #expect(child.description.contains("app.items has no owned rule: a stream is a row of an owned table"), "\(child)")
    }
}
