import FerryTestSupport
import Foundation

/// The tables a simulation writes, by the part each plays, so that the same seeded
/// runs hold FerryKit to two apps' schemas: the study app's hand-written SQL turned
/// sync rules, and the to-do app's written on the rules alone.
struct SimulationSchema: Sendable {
    /// The example whose migrations the server runs.
    var app: ExampleApp
    /// Rows owned by their creator and shared through `members`: study sets, lists.
    var shared: Table
    /// Rows ranked within a shared row: terms, todos.
    var child: Table
    /// Rows private to their owner: folders, notes.
    var own: Table
    /// Links from an own row to a shared row (folder_sets), if the app has them.
    var link: Link?
    /// Rows that share a shared row with a user: set collaborators, list members.
    var members: Members
    /// Issue 46: the shared table's boolean column that makes a row readable by
    /// every signed-in user (`ferry.sync_public`), and the stream a device
    /// subscribes to by a shared row's id (`ferry.sync_stream`). With both, the
    /// simulation's devices publish sets and subscribe to them
    /// (``Simulation/subscribes``); nil: the app has neither, and the
    /// simulation draws as before.
    var publicFlag: String?
    var stream: String?
    /// Migrations applied after the example's (file name to SQL): what the
    /// simulation needs that the example does not declare.
    var fixture: [String: String] = [:]

    struct Table: Sendable {
        var name: String
        /// The owner column (shared, own) or the parent reference (child).
        var reference: String
        /// Text columns a device writes: the first on create, any of them on an edit.
        var fields: [String]
    }

    struct Link: Sendable {
        var name: String
        var own: String
        var shared: String
    }

    struct Members: Sendable {
        var name: String
        var scope: String
        var user: String
    }

    /// Every resource the checks compare, in the order they read them.
    var resources: [String] { [shared.name, child.name, own.name] + (link.map { [$0.name] } ?? []) + [members.name] }

    static let study = SimulationSchema(
        app: .study,
        shared: Table(name: "study_sets", reference: "creator_id", fields: ["title", "description"]),
        child: Table(name: "terms", reference: "set_id", fields: ["word", "definition"]),
        own: Table(name: "folders", reference: "owner_id", fields: ["name"]),
        link: Link(name: "folder_sets", own: "folder_id", shared: "set_id"),
        members: Members(name: "set_collaborators", scope: "set_id", user: "user_id"))

    /// The study app with public sets (issue 46): its migrations, then
    /// ``publicSetsFixture``; its stream `set` (examples/study's 0018) is a set,
    /// its terms and its collaborator rows.
    static let studyPublic: SimulationSchema = {
        var schema = study
        schema.publicFlag = "is_public"
        schema.stream = "set"
        schema.fixture = ["0900_simulation_public_sets.sql": publicSetsFixture]
        return schema
    }()

    /// Makes study sets public by a flag, as a Quizlet-like app does. The
    /// example may declare one of its own one day: then its column is kept, and
    /// the simulation reads the flag's name from `ferry.sync_rules`
    /// (``publicColumn(of:)``).
    static let publicSetsFixture = """
        ALTER TABLE app.study_sets ADD COLUMN IF NOT EXISTS is_public boolean NOT NULL DEFAULT false;
        DO $$ BEGIN
          IF NOT EXISTS (SELECT 1 FROM ferry.sync_rules
                          WHERE table_oid = 'app.study_sets'::regclass AND public_column IS NOT NULL) THEN
            PERFORM ferry.sync_public('app.study_sets', flag => 'is_public');
          END IF;
        END $$;
        """

    /// A scratch database migrated for this schema: the example's migrations,
    /// then the fixture's; with a public flag, the flag as the database names it.
    func database() throws -> (ScratchDatabase, SimulationSchema) {
        let prefix = "ferry_sim_\(app.rawValue)\(publicFlag == nil ? "" : "_public")"
        guard !fixture.isEmpty else { return (try ScratchDatabase(prefix: prefix, app: app), self) }
        let database = try ScratchDatabase(prefix: prefix, migrate: false)
        do {
            var files = fixture
            let directory = app.migrationsDirectory
            for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) where name.hasSuffix(".sql") {
                files[name] = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
            }
            try database.applyMigrations(appFiles: files)
            var schema = self
            if publicFlag != nil {
                schema.publicFlag =
                    try database.column(
                        "SELECT public_column::text FROM ferry.sync_rules WHERE table_oid = 'app.\(shared.name)'::regclass"
                    ).first ?? nil
            }
            return (database, schema)
        } catch {
            database.drop()
            throw error
        }
    }

    static let todo = SimulationSchema(
        app: .todo,
        shared: Table(name: "lists", reference: "owner_id", fields: ["title"]),
        child: Table(name: "todos", reference: "list_id", fields: ["title"]),
        own: Table(name: "notes", reference: "owner_id", fields: ["body"]),
        link: nil,
        members: Members(name: "list_members", scope: "list_id", user: "user_id"))
}
