@testable import Ferry
import FerryHTTPTestSupport
import FerryPostgres
import FerryTestSupport
import Foundation
import Logging
import Testing

extension ChangesSuites {
    /// Purging tombstones expires older cursors; a full sync still works.
    @Suite struct RetentionTests {
        @Test func purgeThenOldCursorIs410ThenFullSyncWorks() throws {
            let server = try TestServer()
            defer { server.stop() }
            let kim = try server.user("kim")
            let set = try server.makeSet(for: kim.id)
            let terms = try server.makeTerms(in: set, count: 4)
            let feed = FeedFollower(server: server, token: kim.token)
            try feed.catchUp(pastXID: try server.maxXID())
            let oldCursor = try #require(feed.cursor)

            _ = try server.ownerQuery("DELETE FROM app.terms WHERE id = $1", [terms[0]])
            try server.backdate("terms", ids: [terms[0]], days: 40)
            let connection = try PostgresConnection(url: server.database.ownerURL)
            defer { connection.close() }
            var lines: [String] = []
            let purged = try TombstonePurge.run(
                connection: connection, ageMs: TombstonePurge.ageMs(days: 30), batch: 1,
                progress: { kind, n, total in lines.append("\(kind) \(n) \(total)") })
            #expect(purged == 1)
            #expect(lines == ["tombstones 1 1", "tombstones 0 1", "accessLog 0 0"])

            let auth = ("Authorization", "Bearer \(kim.token)")
            let expired = try feed.client.request("GET", "/v1/changes?since=\(oldCursor)", headers: [auth])
            #expect(expired.status == 410)
            #expect(expired.object["code"] as? String == "cursor_expired")
            #expect(expired.header("Content-Type") == "application/problem+json")

            let fresh = FeedFollower(server: server, token: kim.token)
            fresh.restartWhenExpired = true
            // The purged tombstone had the newest xid, so wait for the frontier to pass the
            // horizon itself: a cursor at or below it is, by design, expired.
            let horizon = UInt64(try server.ownerQuery("SELECT horizon_xid::text FROM ferry.purge_horizon").rows[0][0] ?? "0") ?? 0
            try fresh.catchUp(pastXID: max(try server.maxXID(), horizon + 1))
            #expect(Set(fresh.rows(of: "terms").keys) == Set(terms.dropFirst()))
            // A cursor from after the purge keeps working.
            let after = try #require(fresh.cursor)
            let later = try fresh.client.request("GET", "/v1/changes?since=\(after)", headers: [auth])
            #expect(later.status == 200 || later.status == 503, "\(later.status) \(later.text)")
        }

        /// A download from the start takes its pages through rows older than the
        /// purge horizon (a position at such a row was 410 before, so a large
        /// subscription of old rows never finished), and expires only when a purge
        /// passes where the download began: a row of its first page deleted after
        /// it and purged.
        @Test func aDownloadFromTheStartPagesPastTheHorizonUntilAPurgePassesItsStart() throws {
            let server = try TestServer()
            defer { server.stop() }
            let kim = try server.user("kim")
            let set = try server.makeSet(for: kim.id)
            let terms = try server.makeTerms(in: set, count: 6)
            let connection = try PostgresConnection(url: server.database.ownerURL)
            defer { connection.close() }
            let auth = ("Authorization", "Bearer \(kim.token)")
            let client = server.client()

            // A purge after every row: the horizon is above all their positions.
            let gone = try server.makeTerms(in: try server.makeSet(for: kim.id), count: 1)
            _ = try server.ownerQuery("DELETE FROM app.terms WHERE id = $1", [gone[0]])
            try server.backdate("terms", ids: gone, days: 40)
            #expect(try TombstonePurge.run(connection: connection, ageMs: TombstonePurge.ageMs(days: 30), batch: 10) == 1)
            let horizon = UInt64(try server.ownerQuery("SELECT horizon_xid::text FROM ferry.purge_horizon").rows[0][0] ?? "0") ?? 0
            #expect(horizon > 0)

            // The first page of two, once the frontier is past the horizon (until then the download would expire at once).
            var first: TestHTTPClient.Response?
            try waitUntil("a first page taken above the horizon", within: 60) {
                let page = try client.request("GET", "/v1/changes?limit=2", headers: [auth])
                first = page
                return (page.object["cursor"] as? String).flatMap { ChangeCursor(token: $0) }.map { $0.base > horizon } ?? false
            }
            let page1 = try #require(first)
            #expect(page1.object["has_more"] as? Bool == true)
            let start = try #require(page1.object["cursor"] as? String)
            let startCursor = try #require(ChangeCursor(token: start))
            #expect(startCursor.position != nil && startCursor.afterXID <= horizon, "the position is below the horizon: \(horizon)")

            // Every later page, although each position is below the horizon.
            var received = Set(ChangesSuites.LongPollTests.ids(page1, "terms"))
            var cursor = start
            var more = true
            while more {
                let page = try client.request("GET", "/v1/changes?limit=2&since=\(cursor)", headers: [auth])
                #expect(page.status == 200, "\(page.status) \(page.text)")
                guard page.status == 200 else { return }
                received.formUnion(ChangesSuites.LongPollTests.ids(page, "terms"))
                cursor = try #require(page.object["cursor"] as? String)
                more = page.object["has_more"] as? Bool == true
            }
            #expect(received == Set(terms))

            // A row the first page may have brought, deleted after it and purged: the horizon
            // passes the download's start, and its positions expire.
            _ = try server.ownerQuery("DELETE FROM app.terms WHERE id = $1", [terms[0]])
            try server.backdate("terms", ids: [terms[0]], days: 40)
            #expect(try TombstonePurge.run(connection: connection, ageMs: TombstonePurge.ageMs(days: 30), batch: 10) == 1)
            let expired = try client.request("GET", "/v1/changes?limit=2&since=\(start)", headers: [auth])
            #expect(expired.status == 410 && expired.object["code"] as? String == "cursor_expired", "\(expired.status) \(expired.text)")
        }

        /// Forgetting old access log entries expires cursors from before them too.
        @Test func purgedAccessLogExpiresOlderCursors() throws {
            let server = try TestServer()
            defer { server.stop() }
            let owner = try server.user("mia")
            let friend = try server.user("ned")
            let set = try server.makeSet(for: owner.id)
            _ = try server.makeTerms(in: set, count: 2)
            let feed = FeedFollower(server: server, token: friend.token)
            try feed.catchUp(pastXID: try server.maxXID())
            let beforeGrant = try #require(feed.cursor)
            _ = try server.ownerQuery("INSERT INTO app.set_collaborators (set_id, user_id) VALUES ($1, $2)", [set, friend.id])
            _ = try server.ownerQuery("UPDATE ferry.access_grants SET created_at = now() - interval '40 days'")
            let connection = try PostgresConnection(url: server.database.ownerURL)
            defer { connection.close() }
            var purgedLog: Int64 = 0
            try TombstonePurge.run(
                connection: connection, ageMs: TombstonePurge.ageMs(days: 30), batch: 10,
                progress: { kind, n, _ in if kind == .accessLog { purgedLog += n } })
            #expect(purgedLog == 1)
            let auth = ("Authorization", "Bearer \(friend.token)")
            let expired = try feed.client.request("GET", "/v1/changes?since=\(beforeGrant)", headers: [auth])
            #expect(expired.status == 410)
            #expect(expired.object["code"] as? String == "cursor_expired")
        }

        @Test func periodicPurgeRunsAsTheServeRole() throws {
            let server = try TestServer()
            defer { server.stop() }
            let lee = try server.user("lee")
            let set = try server.makeSet(for: lee.id)
            let terms = try server.makeTerms(in: set, count: 3)
            _ = try server.ownerQuery("UPDATE app.terms SET is_deleted = true WHERE id = ANY($1::uuid[])", ["{\(terms.joined(separator: ","))}"])
            try server.backdate("terms", ids: terms, days: 3)
            var logger = Logger(label: "purger-test")
            logger.logLevel = .critical
            let purger = TombstonePurger(pool: server.app.pool, retentionDays: 1, intervalSeconds: 0.2, batch: 2, logger: logger)
            purger.start()
            var left = 3
            _ = try eventually(within: 20, every: 0.1) {
                left = Int(try server.ownerQuery("SELECT count(*) FROM app.terms").rows[0][0] ?? "9") ?? 9
                return left == 0
            }
            purger.stop()
            #expect(left == 0)
            #expect(try server.ownerQuery("SELECT horizon_xid > '0' FROM ferry.purge_horizon").rows[0][0] == "t")
        }
    }
}
