import Ferry
import FerryHTTPTestSupport
import FerryMigrations
import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

/// A team adopts Ferry for a table that already holds data: a sync rule applied to it
/// gives every row its first revision, and Index (the initial sync) and the feed serve
/// them all. The test says how long the table was locked: the rule runs in its
/// migration's transaction, which locks the table (ACCESS EXCLUSIVE, from the first
/// ALTER TABLE) until it commits. Figures go to bench/rules/README.md, not into an assertion.
@Suite struct ExistingTableTests {
    static let rows = 100_000

    @Test func aRuleOnATableOf100kRowsServesEveryRowAndSaysHowLongItLocked() throws {
        let database = try ScratchDatabase.create(prefix: "ferry_existing")
        let before = [
            "0001_items.sql": """
            CREATE SCHEMA app;
            CREATE TABLE app.items (id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
                                    owner_id uuid NOT NULL REFERENCES ferry.users, title text NOT NULL);
            """
        ]
        try database.applyMigrations(appFiles: before)
        let owner = try database.connect()
        defer { owner.close() }
        let alice = try owner.query("SELECT ferry.create_user('alice', 'alice-password-1')::text AS id").first?["id"] ?? nil
        _ = try owner.query(
            "INSERT INTO app.items (owner_id, title) SELECT $1::uuid, 'item ' || i FROM generate_series(1, $2::int) i",
            [alice, String(Self.rows)])
        _ = try owner.query("ANALYZE app.items")
        let probe = try owner.query("SELECT id::text FROM app.items LIMIT 1").first?[0] ?? ""

        // A reader reads one row every few milliseconds while the rule is applied.
        let done = Flag()
        let reader = startThread { () -> Result<(reads: Int, longest: Duration), PostgresError> in
            Result { () throws(PostgresError) in
                let connection = try PostgresConnection(url: database.ownerURL)
                defer { connection.close() }
                var longest = Duration.zero
                var reads = 0
                while !done.isRaised {
                    let start = ContinuousClock.now
                    _ = try connection.query("SELECT title FROM app.items WHERE id = $1::uuid", [probe])
                    longest = max(longest, ContinuousClock.now - start)
                    reads += 1
                    usleep(2_000)
                }
                return (reads, longest)
            }
        }
        let start = ContinuousClock.now
        try database.applyMigrations(
            appFiles: before.merging([
                "0002_sync.sql": "SELECT ferry.sync_owned('app.items', owner => 'owner_id');\n"
            ]) { $1 })
        let migration = ContinuousClock.now - start
        done.raise()
        let read = try reader.wait().get()
        #expect(read.reads > 0)
        #expect(
            try database.column("SELECT count(*) || ' ' || min(revision) || ' ' || max(revision) FROM app.items")
                == ["\(Self.rows) 1 1"], "every row has its first revision")

        let server = try TestServer(database: database)
        defer { server.stop() }
        let token = try #require(try AuthService.issueToken(name: "alice", ttlSeconds: 600, connection: owner)).token
        let client = server.client()
        let auth = [("Authorization", "Bearer \(token)")]
        // Index, paged through its snapshot, as FerryKit's initial sync reads it.
        var ids = Set<String>()
        var next: String? = "/v1/items?limit=1000"
        var pages = 0
        while let path = next {
            let page = try client.request("GET", path, headers: auth)
            try #require(page.status == 200, "\(path): \(page.text.prefix(300))")
            for row in page.object["data"] as? [[String: Any]] ?? [] {
                if let id = row["id"] as? String, row["revision"] as? Int == 1 { ids.insert(id) }
            }
            next = (page.object["paging"] as? [String: Any])?["next"] as? String
            pages += 1
        }
        #expect(ids.count == Self.rows, "Index served \(ids.count) of \(Self.rows) rows in \(pages) pages")
        // The feed serves a commit once no older transaction is open in the cluster (the
        // other tests' included): its first page may be empty for a while, never wrong.
        var feed = try client.request("GET", "/v1/changes?limit=1000", headers: auth)
        _ = try eventually(within: 60, every: 0.2) {
            feed = try client.request("GET", "/v1/changes?limit=1000", headers: auth)
            return (feed.object["changes"] as? [Any])?.count == 1000
        }
        #expect((feed.object["changes"] as? [Any])?.count == 1000 && feed.object["has_more"] as? Bool == true, "\(feed.text.prefix(200))")
        print(
            "sync rule on an existing table of \(Self.rows) rows: the migration took \(migration / .milliseconds(1)) ms; a reader, "
                + "reading a row every 2 ms meanwhile, waited at most \(read.longest / .milliseconds(1)) ms (\(read.reads) reads); Index served "
                + "\(ids.count) rows in \(pages) pages")
    }
}
