@testable import Ferry
import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Testing

extension StreamFanOutTests {
    /// A class follows a set by event stream (the teacher's benchmark,
    /// bench/live): a commit's page is one check's, encoded once
    /// (``EncodedPage``), and sent to every reader. Each still gets exactly
    /// the page its own poll answers, with its own cursor as the event's id;
    /// a reader whose token was revoked gets a problem, never the page.
    @Test func eventStreamsOfManyReadersTakeOnePageEncodedOnceAndARevokedReaderNone() throws {
        let w = try SyncStreamTests.world {
            $0.live.maxWaitSeconds = ChangesSuites.FanOutTests.longestWait
            $0.live.heartbeatSeconds = 60
        }
        defer { w.server.stop() }
        let open = try SyncStreamTests.set(w, public: true, terms: 1)
        let readers = try Self.users(w, ["dora", "ezra", "fay", "gus", "hal", "jan"])
        let stream = "set:\(open.id)"
        let streams = try readers.map { reader in
            try EventStreamReader(port: w.server.port, token: reader.token, query: "?stream=\(stream)&since=now")
        }
        for reader in streams { _ = try reader.nextChanges() }  // the first event: empty, at once
        try w.server.waitForWaiters(readers.count)
        try waitUntil("every check to name its caller", within: 30) { !w.server.app.live.registryHasAnonymousWaiters }
        // Jan signs out (his token revoked by hand: no instance is told) while he follows.
        _ = try w.server.ownerQuery("UPDATE ferry.tokens SET revoked = true WHERE user_id = $1", [readers[5].id])
        // Past the token cache's second: every reader's token is looked up again before it takes a page.
        Thread.sleep(forTimeInterval: 1.2)
        _ = try SyncStreamTests.term(w, in: open.id, word: "first")
        let jan = try streams[5].nextChanges()
        #expect(jan.event == "problem", "\(jan.data.prefix(300))")
        #expect(jan.json["status"] as? Int == 401, "\(jan.data.prefix(300))")

        // Five readers, one commit: one check's page, the others take it. How
        // many take it is scheduling (one that resumes while no check is on
        // offer makes its own), so commits go on until two pages were taken.
        let followers = Array(streams.prefix(5))
        // The first commit's event, read past: its id is where each reader is.
        var cursors = try followers.map { try #require($0.nextChanges().id) }
        var taken = 0
        var commits = 0
        while taken < 2 && commits < 5 {
            commits += 1
            try w.server.waitForWaiters(5)
            let before = w.server.app.live.sharedAnswers
            let term = try SyncStreamTests.term(w, in: open.id, word: "round \(commits)")
            for (index, follower) in followers.enumerated() {
                let event = try follower.nextChanges()
                #expect(changedIDs(event.json, "terms") == [term], "\(event.data.prefix(300))")
                #expect(event.id == event.json["cursor"] as? String)
                // Exactly the page the reader's own poll from its cursor answers: compact, entries byte for byte.
                let poll = try w.client.request(
                    "GET", "/v1/changes?stream=\(stream)&since=\(cursors[index])&wait=0",
                    headers: [("Authorization", "Bearer \(readers[index].token)")])
                let entries = { (page: String) in page.components(separatedBy: ",\"cursor\":").first ?? "" }
                #expect(poll.status == 200 && entries(event.data) == entries(poll.text), "\(event.data) against \(poll.text)")
                #expect(!event.data.contains(" : "))
                cursors[index] = event.id ?? ""
            }
            taken += w.server.app.live.sharedAnswers - before
        }
        #expect(taken >= 2, "shared \(taken) in \(commits) commits")
    }
}
