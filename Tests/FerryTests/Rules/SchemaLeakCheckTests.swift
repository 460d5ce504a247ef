import Ferry
import FerryHTTPTestSupport
import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

/// The mistakes issue 48 planted that `ferry check` missed: each is planted in a sound
/// app on the sync rules, shown to leak or break as the serve role (the role every
/// request runs as), and then found by `ferry check`, naming the table and the fix.
@Suite struct SchemaLeakCheckTests {
    static let sound = [
        "0001_sound.sql": """
        CREATE SCHEMA app;
        CREATE TABLE app.projects (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), owner_id uuid NOT NULL REFERENCES ferry.users,
                                   name text NOT NULL DEFAULT '');
        SELECT ferry.sync_owned('app.projects', owner => 'owner_id');
        CREATE TABLE app.members (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), project_id uuid NOT NULL REFERENCES app.projects,
                                  user_id uuid NOT NULL REFERENCES ferry.users);
        SELECT ferry.sync_members('app.members', scope => 'project_id', member => 'user_id');
        CREATE TABLE app.tasks (id uuid PRIMARY KEY, project_id uuid NOT NULL REFERENCES app.projects, title text);
        SELECT ferry.sync_child('app.tasks', parent => 'project_id');
        CREATE TABLE app.notes (id uuid PRIMARY KEY, owner_id uuid NOT NULL REFERENCES ferry.users, body text);
        SELECT ferry.sync_owned('app.notes', owner => 'owner_id');
        CREATE TABLE app.diary (id uuid PRIMARY KEY, owner_id uuid NOT NULL REFERENCES ferry.users, body text);
        SELECT ferry.sync_owned('app.diary', owner => 'owner_id');
        CREATE TABLE app.tickets (id serial PRIMARY KEY, owner_id uuid NOT NULL REFERENCES ferry.users, body text);
        SELECT ferry.sync_owned('app.tickets', owner => 'owner_id');
        CREATE TABLE app.labels (id bigint PRIMARY KEY, owner_id uuid NOT NULL REFERENCES ferry.users, name text);
        SELECT ferry.sync_owned('app.labels', owner => 'owner_id');
        """
    ]

    /// Each mistake as a hand edit on the live database (the owner's), and the finding it must give.
    static let planted: [(sql: String, code: String, object: String)] = [
        ("CREATE POLICY anyone_reads ON app.projects FOR SELECT USING (true)", "foreign_policy", "app.projects policy anyone_reads"),
        ("GRANT UPDATE (owner_id) ON app.projects TO ferry_app", "grant_beyond_rule", "app.projects.owner_id"),
        ("GRANT DELETE ON app.notes TO ferry_app", "grant_beyond_rule", "app.notes"),
        ("GRANT TRUNCATE ON app.tasks TO ferry_app", "grant_beyond_rule", "app.tasks"),
        ("ALTER POLICY ferry_rules_all ON app.diary USING (true) WITH CHECK (true)", "always_true_policy", "app.diary policy ferry_rules_all"),
        ("DROP POLICY ferry_rules_create ON app.members", "rule_policy_missing", "app.members policy ferry_rules_create"),
        ("SELECT 1", "offline_unsafe_id", "app.tickets.id"),
        ("SELECT 1", "offline_unsafe_id", "app.labels.id"),
        (
            """
            CREATE FUNCTION app.every_project() RETURNS SETOF app.projects LANGUAGE sql STABLE SECURITY DEFINER
                AS 'SELECT * FROM app.projects';
            GRANT EXECUTE ON FUNCTION app.every_project() TO ferry_app
            """, "function_bypasses_row_level_security", "app.every_project()"
        ),
        (
            "CREATE VIEW app.project_names AS SELECT id, name FROM app.projects; GRANT SELECT ON app.project_names TO ferry_app",
            "view_bypasses_row_level_security", "app.project_names"
        ),
    ]

    /// Runs `sql` as the serve role for `user`, as a request would, and rolls back.
    private func asUser<T>(_ database: ScratchDatabase, _ user: String, _ body: (PostgresConnection) throws -> T) throws -> T {
        let app = try PostgresConnection(url: database.appURL)
        defer { app.close() }
        try app.execute("BEGIN")
        defer { _ = try? app.execute("ROLLBACK") }
        _ = try app.query("SELECT set_config('ferry.user_id', $1, true)", [user])
        return try body(app)
    }

    /// The SQLSTATE `body` fails with; nil when it succeeds.
    private func sqlState(_ body: () throws -> some Any) throws -> String? {
        do {
            _ = try body()
            return nil
        } catch let error as PostgresError {
            return error.sqlState
        }
    }

    private func count(_ connection: PostgresConnection, _ sql: String, _ values: [String?] = []) throws -> Int {
        try connection.query(sql, values).first?.int(0) ?? -1
    }

    @Test func everyPlantedLeakShowsAsTheServeRoleAndFerryCheckNamesIt() throws {
        let database = try ScratchDatabase.create(prefix: "ferry_leak")
        defer { database.drop() }
        try database.applyMigrations(appFiles: Self.sound)
        let owner = try database.connect()
        defer { owner.close() }
        let alice = try #require(try owner.query("SELECT ferry.create_user('alice', 'correct-horse')::text").first?[0])
        let bob = try #require(try owner.query("SELECT ferry.create_user('bob', 'correct-horse')::text").first?[0])
        let carol = try #require(try owner.query("SELECT ferry.create_user('carol', 'correct-horse')::text").first?[0])
        let shared = try #require(
            try owner.query("INSERT INTO app.projects (owner_id, name) VALUES ($1, 'shared') RETURNING id::text", [alice]).first?[0])
        let secret = try #require(
            try owner.query("INSERT INTO app.projects (owner_id, name) VALUES ($1, 'secret') RETURNING id::text", [alice]).first?[0])
        _ = try owner.query("INSERT INTO app.members (project_id, user_id) VALUES ($1, $2)", [shared, bob])
        let note = UUID().uuidString.lowercased()
        _ = try owner.query("INSERT INTO app.notes (id, owner_id, body) VALUES ($1, $2, 'mine')", [note, alice])

        // Sound: bob reads the shared project, not the secret one; he cannot take one over.
        try asUser(database, bob) { app in
            let visible = try count(app, "SELECT count(*) FROM app.projects")
            #expect(visible == 1)
        }
        for planted in Self.planted { try owner.execute(planted.sql) }

        // The consequences, as the serve role.
        try asUser(database, bob) { app in
            // An extra permissive policy: bob reads alice's secret project.
            let secretRows = try count(app, "SELECT count(*) FROM app.projects WHERE id = $1", [secret])
            #expect(secretRows == 1)
            // The SECURITY DEFINER function and the view return every user's rows.
            let throughFunction = try count(app, "SELECT count(*) FROM app.every_project() WHERE id = $1", [secret])
            #expect(throughFunction == 1)
            let throughView = try count(app, "SELECT count(*) FROM app.project_names WHERE id = $1", [secret])
            #expect(throughView == 1)
            // UPDATE (owner_id): a member takes the shared project over.
            let takenOver = try app.query("UPDATE app.projects SET owner_id = $1 WHERE id = $2", [bob, shared]).affectedRows
            #expect(takenOver == 1)
        }
        try asUser(database, alice) { app in
            // DELETE: a session that says it purges removes the note, with no tombstone for
            // alice's other devices (without DELETE, the purge's own trigger path is the owner's).
            _ = try app.query("SELECT set_config('ferry.purging', 'on', true)")
            let deleted = try app.query("DELETE FROM app.notes WHERE id = $1", [note]).affectedRows
            #expect(deleted == 1)
            let left = try count(app, "SELECT count(*) FROM app.notes")
            #expect(left == 0)
            // The dropped create policy: the owner cannot add a member any more.
            let memberAdded = try sqlState { try app.query("INSERT INTO app.members (project_id, user_id) VALUES ($1, $2)", [shared, carol]) }
            #expect(memberAdded == "42501")
        }
        _ = try owner.query("INSERT INTO app.diary (id, owner_id, body) VALUES (gen_random_uuid(), $1, 'dear diary')", [alice])
        _ = try owner.query("INSERT INTO app.labels (id, owner_id, name) VALUES (1, $1, 'alice''s')", [alice])
        try asUser(database, bob) { app in
            // The altered generated policy: bob reads alice's diary.
            let diaries = try count(app, "SELECT count(*) FROM app.diary")
            #expect(diaries == 1)
            // A sequence id: a create that leaves it to the server fails; ids two users make collide.
            let sequenceCreate = try sqlState { try app.query("INSERT INTO app.tickets (body) VALUES ('x')") }
            #expect(sequenceCreate == "42501")
        }
        try asUser(database, bob) { app in
            let collision = try sqlState { try app.query("INSERT INTO app.labels (id, name) VALUES (1, 'bob''s')") }
            #expect(collision == "23505")
        }

        // ferry check names every one.
        let environment = ["FERRY_DATABASE_URL": database.appURL]
        let text = try FerryProcess.run(["check"], environment: environment)
        #expect(text.status == 1, "\(text.stdout)\n\(text.stderr)")
        let json = try FerryProcess.run(["check", "--json"], environment: environment)
        let findings = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]] ?? []
        for planted in Self.planted {
            let found = findings.first { $0["code"] as? String == planted.code && $0["object"] as? String == planted.object }
            #expect(found?["severity"] as? String == "error", "\(planted.code) on \(planted.object) not found in:\n\(text.stdout)")
            #expect((found?["fix"] as? String)?.isEmpty == false)
            #expect(text.stdout.contains("\(planted.object): "), "the text output names \(planted.object)")
        }
        print("ferry check (leaks): \(findings.count) findings for \(Self.planted.count) planted mistakes:\n\(text.stdout)")
    }

    /// The two leaks the issue confirmed over HTTP, as a client meets them: a hand-made
    /// `GRANT UPDATE (owner_id)` lets a member take a project over (its owner then gets
    /// 404), and a policy beside the rule's lets bob list alice's private project.
    @Test func theConfirmedLeaksOverHTTP() throws {
        let database = try ScratchDatabase.create(prefix: "ferry_leak")
        try database.applyMigrations(appFiles: Self.sound)
        // The grant is planted before the server reads the schema, as on a live database that restarts.
        _ = try database.ownerQuery("GRANT UPDATE (owner_id) ON app.projects TO ferry_app")
        let server = try TestServer(database: database)
        defer { server.stop() }
        let alice = try server.user("alice")
        let bob = try server.user("bob")
        let client = server.client()
        let asAlice = [("Authorization", "Bearer \(alice.token)")]
        let asBob = [("Authorization", "Bearer \(bob.token)")]
        let shared = try client.request("POST", "/v1/projects", headers: asAlice, json: ["name": "shared"])
        let secret = try client.request("POST", "/v1/projects", headers: asAlice, json: ["name": "secret"])
        #expect(shared.status == 201 && secret.status == 201, "\(shared.text) \(secret.text)")
        let sharedID = shared.object["id"] as? String ?? ""
        let secretID = secret.object["id"] as? String ?? ""
        let member = try client.request("POST", "/v1/members", headers: asAlice, json: ["project_id": sharedID, "user_id": bob.id])
        #expect(member.status == 201, "\(member.text)")

        let takeover = try client.request(
            "PATCH", "/v1/projects/\(sharedID)", headers: asBob, json: ["owner_id": bob.id, "revision": 1])
        #expect(takeover.status == 200, "\(takeover.text)")
        #expect(try client.request("GET", "/v1/projects/\(sharedID)", headers: asAlice).status == 404)

        #expect(!(try client.request("GET", "/v1/projects", headers: asBob).text.contains(secretID)))
        _ = try database.ownerQuery("CREATE POLICY anyone_reads ON app.projects FOR SELECT USING (true)")
        let listed = try client.request("GET", "/v1/projects", headers: asBob)
        #expect(listed.text.contains(secretID), "\(listed.text)")

        // ferry check names both.
        let check = try FerryProcess.run(["check"], environment: ["FERRY_DATABASE_URL": database.appURL])
        #expect(check.status == 1)
        #expect(check.stdout.contains("error   app.projects.owner_id: the serve role ferry_app holds UPDATE (owner_id)"), "\(check.stdout)")
        #expect(check.stdout.contains("error   app.projects policy anyone_reads: its owned rule did not generate it"))
    }

    /// The leaks must not be reported where there are none: a view that is
    /// security_invoker, a SECURITY DEFINER function a policy calls, a restrictive policy
    /// beside a rule (a warning: it narrows, it cannot leak).
    @Test func whatDoesNotLeakIsNotAnError() throws {
        let database = try ScratchDatabase.create(prefix: "ferry_leak")
        defer { database.drop() }
        try database.applyMigrations(appFiles: Self.sound)
        let owner = try database.connect()
        defer { owner.close() }
        try owner.execute(
            """
            DROP TABLE app.tickets, app.labels;
            CREATE VIEW app.my_projects WITH (security_invoker = true) AS SELECT id, name FROM app.projects;
            GRANT SELECT ON app.my_projects TO ferry_app;
            CREATE POLICY only_named ON app.notes AS RESTRICTIVE FOR SELECT USING (body IS NOT NULL);
            """)
        let outcome = try FerryProcess.run(["check", "--json"], environment: ["FERRY_DATABASE_URL": database.appURL])
        let findings = try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [[String: Any]] ?? []
        #expect(findings.count == 1, "\(outcome.stdout)")
        #expect(findings.first?["code"] as? String == "foreign_policy")
        #expect(findings.first?["severity"] as? String == "warning")
        #expect(outcome.status == 0)
    }

    /// `ferry migrate` puts a ruled table back as its rule says after every file, and says
    /// so, naming the file, the table and what it repaired.
    @Test func migrateNamesWhatTheRulesRepaired() throws {
        let database = try ScratchDatabase.create(prefix: "ferry_leak")
        defer { database.drop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-leak-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for (name, sql) in Self.sound { try sql.write(to: directory.appendingPathComponent(name), atomically: true, encoding: .utf8) }
        try """
        ALTER TABLE app.notes DISABLE ROW LEVEL SECURITY;
        GRANT DELETE ON app.notes TO ferry_app;
        DROP POLICY ferry_rules_all ON app.diary;
        GRANT UPDATE (owner_id) ON app.projects TO ferry_app;
        ALTER TABLE app.tasks ADD COLUMN done boolean NOT NULL DEFAULT false;
        REVOKE UPDATE (title) ON app.tasks FROM ferry_app;
        """.write(to: directory.appendingPathComponent("0002_mistakes.sql"), atomically: true, encoding: .utf8)
        let environment = ["FERRY_DATABASE_MIGRATION_URL": database.ownerURL, "FERRY_DATABASE_URL": database.appURL]
        let migrate = try FerryProcess.run(["migrate", "--dir", directory.path], environment: environment)
        #expect(migrate.status == 0, "\(migrate.stdout)\n\(migrate.stderr)")
        let repairs = migrate.stdout.split(separator: "\n").filter { $0.hasPrefix("warning: 0002_mistakes.sql left ") }
        for expected in [
            "app.notes unlike its sync rule: Row Level Security was disabled",
            "app.notes unlike its sync rule: DELETE was granted to ferry_app",
            "app.diary unlike its sync rule: the rule's policy ferry_rules_all was dropped",
            "app.projects unlike its sync rule: UPDATE (owner_id) was granted to ferry_app beyond the rule",
            // Granted again by the refresh: the file's intent would be lost without this.
            "app.tasks unlike its sync rule: UPDATE (title) was revoked from ferry_app, which the rule grants",
        ] {
            #expect(repairs.contains { $0.contains(expected) }, "\(expected) not in:\n\(migrate.stdout)")
        }
        // A column added to a ruled table is granted by the rule, as designed: no warning.
        #expect(repairs.count == 5, "\(repairs)")
        #expect(!migrate.stdout.contains("0001_sound.sql left"))
        // Repaired: ferry check finds nothing on those tables.
        let check = try FerryProcess.run(["check", "--json"], environment: environment)
        #expect(!check.stdout.contains("app.notes") && !check.stdout.contains("app.diary"), "\(check.stdout)")
    }

    /// `ferry serve` on `port` over `database`, with `settings` added to a clean FERRY_*
    /// environment; its standard output.
    private func serve(_ database: ScratchDatabase, port: Int, _ settings: [String: String]) throws -> (Process, Pipe) {
        let process = Process()
        process.executableURL = try FerryProcess.binary
        process.arguments = ["serve"]
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("FERRY_") }
        env["FERRY_DATABASE_URL"] = database.appURL
        env["FERRY_LISTEN_PORT"] = String(port)
        env.merge(settings) { _, new in new }
        process.environment = env
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        return (process, output)
    }

    /// `ferry serve` logs each finding at start; with database.schema_check refuse, an
    /// error keeps it from starting.
    @Test func serveLogsTheFindingsAndRefusesWhenConfigured() throws {
        let database = try ScratchDatabase.create(prefix: "ferry_leak")
        defer { database.drop() }
        try database.applyMigrations(appFiles: Self.sound)
        let owner = try database.connect()
        defer { owner.close() }
        try owner.execute("DROP TABLE app.tickets, app.labels; CREATE POLICY anyone_reads ON app.projects FOR SELECT USING (true)")

        // refuse: the finding is logged, and the process exits 1 before it listens.
        let port = FreePort.next()
        let (refusing, refusedOutput) = try serve(database, port: port, ["FERRY_DATABASE_SCHEMA_CHECK": "refuse"])
        defer { if refusing.isRunning { refusing.terminate() } }
        let exited = eventually(within: 60, every: 0.1) { !refusing.isRunning }
        #expect(exited, "ferry serve with database.schema_check refuse kept running")
        if !exited { refusing.terminate() }
        refusing.waitUntilExit()
        let refused = String(decoding: refusedOutput.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(refusing.terminationStatus == 1)
        #expect(refused.contains("foreign_policy app.projects policy anyone_reads: "), "\(refused)")
        #expect(refused.contains("fix: DROP POLICY anyone_reads ON app.projects"))
        #expect(refused.contains("database.schema_check is refuse"))

        // warn (the default): the same line, and the server serves.
        let (process, output) = try serve(database, port: port, [:])
        defer { if process.isRunning { process.terminate() } }
        let client = TestHTTPClient(port: port, timeout: 5)
        #expect(eventually(within: 60, every: 0.1) { (try? client.request("GET", "/healthz"))?.status == 200 })
        client.close()
        process.terminate()
        process.waitUntilExit()
        let log = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(log.contains("foreign_policy app.projects policy anyone_reads: "), "\(log)")
    }
}
