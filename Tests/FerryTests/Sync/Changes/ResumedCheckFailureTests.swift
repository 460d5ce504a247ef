import FerryHTTPTestSupport
import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

extension ChangesSuites {
    /// A waiter woken by a commit whose check then fails with a passing failure
    /// (here a statement timeout: 503) checks again a second later, with the
    /// listener up and no other commit to wake it (`LiveFeed.retrySoon`). Before,
    /// it parked until its deadline with the change it was woken for unsent.
    @Suite struct ResumedCheckFailureTests {
        @Test func aWaiterWhoseWokenCheckTimesOutChecksAgainWithNoOtherCommit() throws {
            // Waits as long as the poll asks, so that its deadline cannot answer it either.
            let server = try TestServer {
                $0.database.statementTimeoutMs = 500
                $0.live.maxWaitSeconds = 3_600
            }
            defer { server.stop() }
            let alice = try server.user("alice")
            let set = try server.makeSet(for: alice.id)
            let feed = FeedFollower(server: server, token: alice.token)
            try feed.catchUp(pastXID: try server.maxXID())
            let poll = PendingRequest(port: server.port, "/v1/changes?since=\(feed.cursor ?? "")&wait=600", token: alice.token)
            try server.waitForWaiters(1)
            let writer = try server.database.connect()
            defer { writer.close() }
            let watcher = try server.database.connect()
            defer { watcher.close() }
            // A batch job writes a term; a second session queues for an exclusive lock on the
            // table behind it, so it holds the table from the moment the job commits, before the
            // check the job's hint wakes can read it.
            try writer.execute("BEGIN")
            let term = try #require(
                try writer.query("INSERT INTO app.terms (set_id, word, definition) VALUES ($1, 'locked out', 'd') RETURNING id::text", [set])
                    .rows.first?[0] ?? nil)
            let url = server.database.url
            let locked = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let released = DispatchSemaphore(value: 0)
            Thread {
                defer { released.signal() }
                guard let locker = try? PostgresConnection(url: url) else {
                    locked.signal()
                    return
                }
                defer { locker.close() }
                _ = try? locker.execute("SET application_name = 'ferry_test_locker'")
                _ = try? locker.execute("BEGIN")
                _ = try? locker.execute("LOCK TABLE app.terms IN ACCESS EXCLUSIVE MODE")
                locked.signal()
                release.wait()
                _ = try? locker.execute("COMMIT")
            }.start()
            defer {
                release.signal()
                _ = released.wait(timeout: .now() + 30)
            }
            try waitUntil("the lock to queue behind the job", within: 30) {
                try watcher.query(
                    "SELECT count(*)::text FROM pg_stat_activity WHERE application_name = 'ferry_test_locker' AND wait_event_type = 'Lock'"
                ).rows.first?[0] == "1"
            }
            try writer.execute("COMMIT")
            #expect(locked.wait(timeout: .now() + 30) == .success)
            // The woken check waits for the lock until its statement timeout: seen waiting, then gone.
            let waitingCheck = """
                SELECT count(*)::text FROM pg_stat_activity
                 WHERE datname = current_database() AND wait_event_type = 'Lock' AND application_name <> 'ferry_test_locker'
                """
            try waitUntil("the woken check to wait for the lock", within: 30) {
                try watcher.query(waitingCheck).rows.first?[0] != "0"
            }
            try waitUntil("the check to time out", within: 30) { try watcher.query(waitingCheck).rows.first?[0] == "0" }
            #expect(!poll.isAnswered)
            release.signal()
            // Nothing else is written: only the retry can answer it.
            let response = try poll.response()
            #expect(response.status == 200)
            #expect(LongPollTests.ids(response, "terms") == [term])
        }
    }
}
