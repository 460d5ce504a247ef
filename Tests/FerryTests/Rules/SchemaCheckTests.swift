import Ferry
import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

/// `ferry check` as CI runs it: the built binary, the serve role's URL, exit codes.
@Suite struct SchemaCheckTests {
    /// A sound app on the sync rules; `planted` then breaks it, one mistake per table.
    static let sound = [
        "0001_sound.sql": """
        CREATE SCHEMA app;
        CREATE TABLE app.lists (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), owner_id uuid NOT NULL REFERENCES ferry.users,
                                title text NOT NULL DEFAULT '',
                                -- Written by the database: nothing to say about their grants.
                                number bigint GENERATED ALWAYS AS IDENTITY, search text GENERATED ALWAYS AS (upper(title)) STORED);
        SELECT ferry.sync_owned('app.lists', owner => 'owner_id');
        CREATE TABLE app.open_notes (id uuid PRIMARY KEY, owner_id uuid NOT NULL REFERENCES ferry.users, body text);
        SELECT ferry.sync_owned('app.open_notes', owner => 'owner_id');
        CREATE TABLE app.events (id numeric PRIMARY KEY, owner_id uuid NOT NULL REFERENCES ferry.users);
        SELECT ferry.sync_owned('app.events', owner => 'owner_id');
        CREATE TABLE app.comments (id uuid PRIMARY KEY, list_id uuid NOT NULL REFERENCES app.lists, body text);
        SELECT ferry.sync_child('app.comments', parent => 'list_id');
        CREATE TABLE app.cards (id uuid PRIMARY KEY, list_id uuid NOT NULL REFERENCES app.lists, rank text COLLATE "C" NOT NULL DEFAULT 'U');
        SELECT ferry.sync_child('app.cards', parent => 'list_id');
        CREATE TABLE app.pins (id uuid PRIMARY KEY, owner_id uuid NOT NULL REFERENCES ferry.users, label text, color text);
        SELECT ferry.sync_owned('app.pins', owner => 'owner_id');
        CREATE TABLE app.forms (id uuid PRIMARY KEY, owner_id uuid NOT NULL REFERENCES ferry.users, code text NOT NULL);
        SELECT ferry.sync_owned('app.forms', owner => 'owner_id');
        -- Ids of the text types serve takes as they are: nothing to say of them either.
        CREATE EXTENSION IF NOT EXISTS citext;
        CREATE TABLE app.handles (id citext PRIMARY KEY, owner_id uuid NOT NULL REFERENCES ferry.users);
        SELECT ferry.sync_owned('app.handles', owner => 'owner_id');
        CREATE TABLE app.codes (id character(6) PRIMARY KEY, owner_id uuid NOT NULL REFERENCES ferry.users);
        SELECT ferry.sync_owned('app.codes', owner => 'owner_id');
        """
    ]

    /// Each statement plants one mistake, as a hand edit after `ferry migrate` would (a
    /// migration, or a rule stated, would have the rules put their tables right again):
    /// the finding each must give.
    static let planted: [(sql: String, code: String, object: String)] = [
        // First: stating a rule regenerates every rule, which would repair the mistakes planted before it.
        (
            """
            CREATE TABLE app.users (id uuid PRIMARY KEY, owner_id uuid NOT NULL REFERENCES ferry.users, bio text);
            SELECT ferry.sync_owned('app.users', owner => 'owner_id')
            """, "reserved_name", "app.users"
        ),
        (
            """
            CREATE TABLE app.crews (id uuid PRIMARY KEY, owner_id uuid NOT NULL REFERENCES ferry.users);
            SELECT ferry.sync_owned('app.crews', owner => 'owner_id');
            CREATE TABLE app.crew_members (id uuid PRIMARY KEY, crew_id uuid NOT NULL REFERENCES app.crews,
                                           user_id uuid NOT NULL REFERENCES ferry.users);
            SELECT ferry.sync_members('app.crew_members', scope => 'crew_id', member => 'user_id');
            CREATE TABLE app.crew_lists (id uuid PRIMARY KEY, crew_id uuid NOT NULL REFERENCES app.crews,
                                         list_id uuid NOT NULL REFERENCES app.lists);
            SELECT ferry.sync_grant('app.crew_lists', scope => 'list_id', through => 'crew_id');
            DROP TRIGGER zz_ferry_rules_grant ON app.crew_lists
            """, "grant_without_triggers", "app.crew_lists"
        ),
        ("ALTER TABLE app.open_notes DISABLE ROW LEVEL SECURITY", "no_row_level_security", "app.open_notes"),
        ("SELECT 1", "bad_id_type", "app.events.id"),
        ("DROP INDEX app.comments_list_id_idx, app.comments_list_id_feed_idx", "unindexed_foreign_key", "app.comments (list_id)"),
        ("DROP INDEX app.cards_list_id_rank_id_idx; CREATE INDEX cards_list_idx ON app.cards (list_id)", "unindexed_rank", "app.cards.rank"),
        ("REVOKE UPDATE (is_deleted) ON app.pins FROM ferry_app", "undeletable", "app.pins.is_deleted"),
        ("REVOKE INSERT (color), UPDATE (color) ON app.pins FROM ferry_app", "unwritable_column", "app.pins.color"),
        ("ALTER TABLE app.comments ALTER COLUMN list_id DROP NOT NULL", "nullable_rule_column", "app.comments.list_id"),
        (
            """
            CREATE TABLE app.logs (id uuid PRIMARY KEY, list_id uuid REFERENCES app.lists, note text);
            SELECT ferry.enable_sync('app.logs'); CREATE INDEX ON app.logs (list_id);
            ALTER TABLE app.logs ENABLE ROW LEVEL SECURITY;
            CREATE POLICY logs_all ON app.logs
                USING (EXISTS (SELECT 1 FROM app.lists l WHERE l.id = list_id AND l.owner_id = ferry.current_user_id()));
            GRANT SELECT, INSERT (id, note), UPDATE (note, is_deleted) ON app.logs TO ferry_app
            """, "unwritable_column", "app.logs.list_id"
        ),
        (
            """
            CREATE TABLE app.members (id uuid PRIMARY KEY, list_id uuid NOT NULL REFERENCES app.lists,
                                      user_id uuid NOT NULL REFERENCES ferry.users);
            SELECT ferry.enable_sync('app.members');
            CREATE INDEX ON app.members (list_id); CREATE INDEX ON app.members (user_id);
            ALTER TABLE app.members ENABLE ROW LEVEL SECURITY;
            CREATE POLICY members_all ON app.members USING (user_id = ferry.current_user_id());
            GRANT SELECT, INSERT (id, list_id, user_id), UPDATE (is_deleted) ON app.members TO ferry_app;
            INSERT INTO ferry.access_scopes (scope_table, member_table, member_column) VALUES ('app.lists', 'app.members', 'list_id')
            """, "membership_without_triggers", "app.members"
        ),
        (
            """
            CREATE FUNCTION app.coin() RETURNS boolean LANGUAGE sql VOLATILE RETURN random() < 2;
            GRANT EXECUTE ON FUNCTION app.coin() TO ferry_app;
            CREATE TABLE app.dice (id uuid PRIMARY KEY, owner_id uuid NOT NULL REFERENCES ferry.users);
            SELECT ferry.enable_sync('app.dice'); CREATE INDEX ON app.dice (owner_id);
            ALTER TABLE app.dice ENABLE ROW LEVEL SECURITY;
            CREATE POLICY dice_all ON app.dice USING (owner_id = ferry.current_user_id() AND app.coin());
            GRANT SELECT, INSERT (id, owner_id), UPDATE (is_deleted) ON app.dice TO ferry_app
            """, "volatile_policy_function", "app.dice policy dice_all"
        ),
        (
            """
            CREATE FUNCTION app.gate() RETURNS boolean LANGUAGE sql STABLE RETURN true;
            REVOKE EXECUTE ON FUNCTION app.gate() FROM PUBLIC;
            CREATE TABLE app.vault (id uuid PRIMARY KEY);
            SELECT ferry.enable_sync('app.vault');
            ALTER TABLE app.vault ENABLE ROW LEVEL SECURITY;
            CREATE POLICY vault_all ON app.vault USING (app.gate());
            GRANT SELECT, INSERT (id), UPDATE (is_deleted) ON app.vault TO ferry_app
            """, "policy_function_not_executable", "app.vault policy vault_all"
        ),
        (
            """
            CREATE TABLE app.left_side (id uuid PRIMARY KEY); CREATE TABLE app.right_side (id uuid PRIMARY KEY);
            SELECT ferry.enable_sync('app.left_side'); SELECT ferry.enable_sync('app.right_side');
            ALTER TABLE app.left_side ENABLE ROW LEVEL SECURITY; ALTER TABLE app.right_side ENABLE ROW LEVEL SECURITY;
            CREATE POLICY left_all ON app.left_side USING (EXISTS (SELECT 1 FROM app.right_side r WHERE r.id = left_side.id));
            CREATE POLICY right_all ON app.right_side USING (EXISTS (SELECT 1 FROM app.left_side l WHERE l.id = right_side.id));
            GRANT SELECT, INSERT (id), UPDATE (is_deleted) ON app.left_side, app.right_side TO ferry_app
            """, "policy_recursion", "app.left_side"
        ),
        (
            """
            CREATE TABLE app.blind (id uuid PRIMARY KEY, note text);
            SELECT ferry.enable_sync('app.blind');
            ALTER TABLE app.blind ENABLE ROW LEVEL SECURITY;
            CREATE POLICY blind_write ON app.blind FOR UPDATE USING (true);
            GRANT SELECT, INSERT (id, note), UPDATE (note, is_deleted) ON app.blind TO ferry_app
            """, "no_read_policy", "app.blind"
        ),
        ("REVOKE INSERT (code) ON app.forms FROM ferry_app", "required_column_not_insertable", "app.forms.code"),
        // NOT NULL through its domain, which has no default: every create fails the same way.
        (
            """
            CREATE DOMAIN app.form_stamp AS text NOT NULL;
            ALTER TABLE app.forms ADD COLUMN stamp app.form_stamp DEFAULT 'x';
            ALTER TABLE app.forms ALTER COLUMN stamp DROP DEFAULT;
            REVOKE INSERT (stamp) ON app.forms FROM ferry_app
            """, "required_column_not_insertable", "app.forms.stamp"
        ),
    ]

    private func check(_ database: ScratchDatabase, _ arguments: [String] = []) throws -> FerryProcess.Outcome {
        try FerryProcess.run(
            ["check"] + arguments,
            environment: [
                "FERRY_DATABASE_URL": database.appURL, "FERRY_DATABASE_MIGRATION_URL": database.ownerURL,
            ])
    }

    @Test func everyPlantedMistakeIsFoundNamingTheObjectAndTheFix() throws {
        let database = try ScratchDatabase.create(prefix: "ferry_check")
        defer { database.drop() }
        try database.applyMigrations(appFiles: Self.sound)
        let owner = try database.connect()
        defer { owner.close() }
        for planted in Self.planted { try owner.execute(planted.sql) }

        let text = try check(database)
        #expect(text.status == 1, "\(text.stdout)\n\(text.stderr)")
        let json = try check(database, ["--json"])
        let findings = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]] ?? []
        var caught = 0
        for planted in Self.planted {
            let found = findings.first { $0["code"] as? String == planted.code && $0["object"] as? String == planted.object }
            #expect(found != nil, "\(planted.code) on \(planted.object) not found in:\n\(text.stdout)")
            #expect((found?["fix"] as? String)?.isEmpty == false)
            #expect(text.stdout.contains("\(planted.object): "), "the text output names \(planted.object)")
            if found != nil { caught += 1 }
        }
        #expect(caught >= 8)
        // An unwritable key is offered INSERT alone (UPDATE on it moves the row away), and a
        // table without a rule no rule to declare it in.
        let fix = { (object: String) in
            findings.first { $0["code"] as? String == "unwritable_column" && $0["object"] as? String == object }?["fix"] as? String ?? ""
        }
        #expect(fix("app.pins.color").contains("UPDATE (color)") && fix("app.pins.color").contains("read_only =>"), "\(fix("app.pins.color"))")
        let key = fix("app.logs.list_id")
        #expect(key.contains("GRANT INSERT (list_id) ON app.logs") && !key.contains("UPDATE (list_id)"), "\(key)")
        #expect(!key.contains("sync rule") && key.contains("leave it to the database"), "\(key)")
        print("ferry check: \(caught) of \(Self.planted.count) planted mistakes caught; \(findings.count) findings in all")
        // Only what was planted: the sound tables have nothing to say.
        let objects = Set(findings.compactMap { $0["object"] as? String })
        for sound in ["app.lists", "app.handles", "app.codes"] {
            #expect(!objects.contains { $0 == sound || $0.hasPrefix("\(sound).") }, "\(objects)")
        }
    }

    @Test(arguments: [ExampleApp.study, .todo])
    func bothExamplesPass(app: ExampleApp) throws {
        let database = try ScratchDatabase(prefix: "ferry_check", app: app)
        defer { database.drop() }
        let outcome = try check(database, ["--strict"])
        #expect(outcome.status == 0, "\(outcome.stdout)\n\(outcome.stderr)")
        #expect(outcome.stdout.hasPrefix("0 errors, 0 warnings in \(app == .study ? 8 : 4) synced tables"), "\(outcome.stdout)")
    }

    /// A logical dump of a cluster whose transaction ids are ahead of this one's,
    /// restored here: its stamp floor and rows hold ids this cluster has not had.
    /// Every write is then stamped above the feed's frontier; `ferry check` says so.
    @Test func idsFromAnotherClustersDumpAreFound() throws {
        let database = try ScratchDatabase(prefix: "ferry_check", app: .study)
        defer { database.drop() }
        let owner = try database.connect()
        defer { owner.close() }
        // As the dump's own setval and rows would bring them: a million ids ahead.
        _ = try owner.query(
            "SELECT setval('ferry.stamp_floor', pg_snapshot_xmax(pg_current_snapshot())::text::int8 + 1000000), "
                + "setval('ferry.stamp_floor_taken', pg_snapshot_xmax(pg_current_snapshot())::text::int8 + 1000000)")
        _ = try owner.query(
            "INSERT INTO app.study_sets (creator_id, title) VALUES (ferry.create_user('dumped', 'a-password-1'), 'restored')")
        let outcome = try check(database, ["--json"])
        #expect(outcome.status == 1, "\(outcome.stdout)\n\(outcome.stderr)")
        let findings = try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [[String: Any]] ?? []
        let foreign = findings.filter { $0["code"] as? String == "ids_from_another_cluster" }
        #expect(
            Set(foreign.compactMap { $0["object"] as? String }) == ["ferry.stamp_floor", "ferry.stamp_floor_taken", "app.study_sets"],
            "\(outcome.stdout)")
        #expect(foreign.allSatisfy { ($0["fix"] as? String)?.contains("pg_resetwal -e") == true && $0["severity"] as? String == "error" })
        // A horizon past the cluster's ids is found too.
        _ = try owner.query("UPDATE ferry.purge_horizon SET horizon_xid = (pg_current_xact_id()::text::int8 + 2000000)::text::xid8")
        let again = try JSONSerialization.jsonObject(with: Data(try check(database, ["--json"]).stdout.utf8)) as? [[String: Any]] ?? []
        #expect(again.contains { $0["code"] as? String == "ids_from_another_cluster" && $0["object"] as? String == "ferry.purge_horizon" })
    }

    /// The fix `offline_unsafe_id` gives runs as written, for an identity id (whose DROP
    /// DEFAULT failed: "identity column type must be smallint, integer, or bigint") and a
    /// serial one, and the finding is gone after it.
    @Test func theOfflineIDFixRunsAsWritten() throws {
        let database = try ScratchDatabase(prefix: "ferry_check", app: .study)
        defer { database.drop() }
        let owner = try database.connect()
        defer { owner.close() }
        try owner.execute(
            """
            CREATE TABLE app.tickets (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, owner_id uuid NOT NULL REFERENCES ferry.users, body text);
            SELECT ferry.sync_owned('app.tickets', owner => 'owner_id');
            CREATE TABLE app.labels (id serial PRIMARY KEY, owner_id uuid NOT NULL REFERENCES ferry.users, name text);
            SELECT ferry.sync_owned('app.labels', owner => 'owner_id');
            """)
        let findings = try JSONSerialization.jsonObject(with: Data(try check(database, ["--json"]).stdout.utf8)) as? [[String: Any]] ?? []
        let fixes = findings.filter { $0["code"] as? String == "offline_unsafe_id" }.compactMap { $0["fix"] as? String }
        #expect(fixes.count == 2, "\(findings)")
        for fix in fixes {
            let sql =
                try #require(fix.range(of: "in a new migration: ").map { String(fix[$0.upperBound...]) })
                .components(separatedBy: " (with the columns").first ?? ""
            try owner.execute(sql)
        }
        let after = try JSONSerialization.jsonObject(with: Data(try check(database, ["--json"]).stdout.utf8)) as? [[String: Any]] ?? []
        #expect(!after.contains { $0["code"] as? String == "offline_unsafe_id" }, "\(after)")
    }

    @Test func aDatabaseThatCannotBeReachedExits2() throws {
        let outcome = try FerryProcess.run(["check"], environment: ["FERRY_DATABASE_URL": "postgresql://nobody:hunter2@127.0.0.1:1/none"])
        #expect(outcome.status == 2)
        #expect(outcome.stderr.hasPrefix("ferry check: cannot check the database: "))
        #expect(!outcome.stderr.contains("hunter2"))
    }
}
