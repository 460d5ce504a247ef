import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

/// The hints migration 0017's triggers send on `ferry_changes`: who a commit
/// may concern, never the row; nothing for a rollback; one per transaction
/// and target; everyone for a write by no user or across too many scopes;
/// collected instead of sent in a transaction of Ferry's own (core 0028).
@Suite struct LiveHintTests {
    final class Fixture {
        let database: ScratchDatabase
        let listener: PostgresConnection
        let owner: PostgresConnection
        let app: PostgresConnection
        let alice: String, bob: String
        let sets: String, terms: String, grants = "0"

        init() throws {
            database = try ScratchDatabase()
            listener = try database.connect()
            try listener.listen(["ferry_changes", "ferry_schema"])
            owner = try database.connect()
            app = try PostgresConnection(url: database.appURL)
            alice = try owner.query("SELECT ferry.create_user('alice', 'pw-alice-1234')").rows[0][0] ?? ""
            bob = try owner.query("SELECT ferry.create_user('bob', 'pw-bob-12345')").rows[0][0] ?? ""
            sets = try owner.query("SELECT 'app.study_sets'::regclass::oid::text").rows[0][0] ?? ""
            terms = try owner.query("SELECT 'app.terms'::regclass::oid::text").rows[0][0] ?? ""
            _ = try drain()
        }

        deinit {
            listener.close()
            owner.close()
            app.close()
            database.drop()
        }

        /// Runs `sql` as `user` in one transaction on the app role (RLS applies).
        func asUser(_ user: String, _ sql: String, _ params: [String?] = []) throws -> PostgresResult {
            try app.transaction { connection in
                _ = try connection.query("SELECT set_config('ferry.user_id', $1, true)", [user])
                return try connection.query(sql, params)
            }
        }

        /// The payloads received since the last call (a short wait for stragglers), without the xid.
        func drain() throws -> Set<String> {
            var payloads: Set<String> = []
            while true {
                let received = try listener.notifications(waitingUpTo: 0.3)
                if received.isEmpty { return payloads }
                for notification in received {
                    let parts = notification.payload.split(separator: " ", maxSplits: 1)
                    payloads.insert(notification.channel == "ferry_schema" ? "schema" : String(parts.last ?? ""))
                }
            }
        }
    }

    @Test func aUsersWriteNamesTheWriterAndTheScopeRow() throws {
        let f = try Fixture()
        let set = try f.asUser(f.alice, "INSERT INTO app.study_sets (title) VALUES ('s') RETURNING id").rows[0][0] ?? ""
        // A set is a member of its own scope.
        #expect(try f.drain() == ["\(f.sets) u \(f.alice)", "\(f.sets) s \(f.sets) \(set)"])
        let term =
            try f.asUser(
                f.alice, "INSERT INTO app.terms (set_id, word) SELECT $1, 'w' || i FROM generate_series(1, 50) i RETURNING id",
                [set]
            ).rows[0][0] ?? ""
        // Fifty rows, one transaction: one hint per target.
        #expect(try f.drain() == ["\(f.terms) u \(f.alice)", "\(f.terms) s \(f.sets) \(set)"])
        _ = try f.asUser(f.alice, "UPDATE app.terms SET word = 'x' WHERE id = $1", [term])
        #expect(try f.drain() == ["\(f.terms) u \(f.alice)", "\(f.terms) s \(f.sets) \(set)"])
        // A delete, as the API makes it (and as a hard DELETE becomes, 0001): an update.
        _ = try f.asUser(f.alice, "UPDATE app.terms SET is_deleted = true WHERE id = $1", [term])
        #expect(try f.drain() == ["\(f.terms) u \(f.alice)", "\(f.terms) s \(f.sets) \(set)"])
        _ = try f.owner.query("DELETE FROM app.terms WHERE id <> $1", [term])
        #expect(try f.drain() == ["\(f.terms) *", "\(f.terms) s \(f.sets) \(set)"])
    }

    /// Core 0026: a transaction Ferry runs collects its hints (once each) in
    /// `ferry.hints` and notifies nothing; a savepoint rolled back takes its hints along.
    @Test func aCollectingTransactionNotifiesNothingAndKeepsItsHints() throws {
        let f = try Fixture()
        let collected = try f.app.transaction { connection -> String in
            _ = try connection.query(
                "SELECT set_config('ferry.user_id', $1, true), set_config('ferry.hint_mode', 'collect', true)", [f.alice])
            let set = try connection.query("INSERT INTO app.study_sets (title) VALUES ('s') RETURNING id").rows[0][0] ?? ""
            _ = try connection.query("UPDATE app.study_sets SET title = 't' WHERE id = $1", [set])
            try connection.execute("SAVEPOINT s")
            _ = try connection.query("INSERT INTO app.terms (set_id, word) VALUES ($1, 'gone')", [set])
            try connection.execute("ROLLBACK TO SAVEPOINT s")
            return (try connection.query("SELECT current_setting('ferry.hints', true)").rows[0][0] ?? "") + "|" + set
        }
        #expect(try f.drain().isEmpty)
        let parts = collected.split(separator: "|")
        let lines = parts[0].split(separator: "\n").map { String($0.split(separator: " ", maxSplits: 1).last ?? "") }
        #expect(lines == ["\(f.sets) s \(f.sets) \(parts[1])", "\(f.sets) u \(f.alice)"])
        // The next transaction on the same connection notifies again.
        _ = try f.asUser(f.alice, "INSERT INTO app.study_sets (title) VALUES ('loud')")
        #expect(try f.drain().contains("\(f.sets) u \(f.alice)"))
    }

    @Test func aRollbackSendsNothing() throws {
        let f = try Fixture()
        try f.app.execute(
            "BEGIN; SELECT set_config('ferry.user_id', '\(f.alice)', true); INSERT INTO app.study_sets (title) VALUES ('gone'); ROLLBACK")
        #expect(try f.drain().isEmpty)
    }

    @Test func aWriteByNoUserOrAcrossManyScopesIsForEveryone() throws {
        let f = try Fixture()
        let set = try f.owner.query("INSERT INTO app.study_sets (creator_id, title) VALUES ($1, 's') RETURNING id", [f.alice]).rows[0][0] ?? ""
        #expect(try f.drain() == ["\(f.sets) *", "\(f.sets) s \(f.sets) \(set)"])
        _ = try f.asUser(f.alice, "INSERT INTO app.study_sets (title) SELECT 's' || i FROM generate_series(1, 101) i")
        #expect(try f.drain() == ["\(f.sets) *"])
    }

    @Test func accessGainedOrLostNamesTheUser() throws {
        let f = try Fixture()
        let set = try f.owner.query("INSERT INTO app.study_sets (creator_id, title) VALUES ($1, 's') RETURNING id", [f.alice]).rows[0][0] ?? ""
        _ = try f.drain()
        let collaborator =
            try f.asUser(
                f.alice, "INSERT INTO app.set_collaborators (set_id, user_id) VALUES ($1, $2) RETURNING id",
                [set, f.bob]
            ).rows[0][0] ?? ""
        let collaborators = try f.owner.query("SELECT 'app.set_collaborators'::regclass::oid::text").rows[0][0] ?? ""
        #expect(try f.drain() == ["0 u \(f.bob)", "\(collaborators) u \(f.alice)", "\(collaborators) s \(f.sets) \(set)"])
        _ = try f.asUser(f.alice, "UPDATE app.set_collaborators SET is_deleted = true WHERE id = $1", [collaborator])
        #expect(try f.drain() == ["0 u \(f.bob)", "\(collaborators) u \(f.alice)", "\(collaborators) s \(f.sets) \(set)"])
    }

    @Test func aMigrationAnnouncesTheSchema() throws {
        let f = try Fixture()
        _ = try f.owner.query("SELECT ferry.refresh_sync_triggers()")
        #expect(try f.drain() == ["schema"])
    }
}
