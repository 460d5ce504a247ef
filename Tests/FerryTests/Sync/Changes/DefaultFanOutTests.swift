import Ferry
import FerryHTTPTestSupport
import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

extension ChangesSuites {
    /// Many users long-polling their default streams, one commit: those whose
    /// own page would hold the same rows take one check's page
    /// (``DefaultChecks``, issue 46 "One query per change"), and every answer
    /// equals a plain poll by the same caller from the same cursor, over the
    /// wire. The commit of the second round mixes a shared set's term, a new
    /// set, a user's own row, a membership granted and one revoked; the third
    /// renames the shared set itself.
    @Suite struct DefaultFanOutTests {
        typealias Waiter = FanOutTests.Waiter

        @Test func usersWhoseReadsAreTheSameShareOneCheckAndEachGetsTheirOwnFeed() throws {
            let server = try FanOutTests.server()
            defer { server.stop() }
            let alice = try server.user("alice")
            // Frank is revoked in round 2: many who read what he read before, so that he is likely to resume
            // when one of them has made the check he must not take.
            let collaborators = try ["bob", "carol", "dave", "frank", "henry", "ivy", "judy"].map { try server.user($0) }
            let (bob, frank) = (collaborators[0], collaborators[3])
            let eve = try server.user("eve")
            let grace = try server.user("grace")
            let set = try server.makeSet(for: alice.id, title: "shared")
            for user in collaborators { try server.share(set, with: user.id) }
            _ = try server.createTerm(in: set, word: "first", token: alice.token)
            /// A cursor every user has caught up to: a frontier cursor is the same for all.
            func cursor() throws -> String {
                let feed = FeedFollower(server: server, token: alice.token)
                try feed.catchUp(pastXID: try server.maxXID())
                return try #require(feed.cursor)
            }
            let earlier = try cursor()
            // Another set, which none of the collaborators reads, between the two cursors.
            _ = try server.makeSet(for: eve.id, title: "eve's")
            let now = try cursor()
            #expect(earlier != now)

            // Round 1: a term in the shared set, from two cursors.
            var waiters: [Waiter] = []
            for user in [alice] + collaborators {
                for _ in 0..<2 { waiters.append(FanOutTests.waiter(server, user.token, since: now)) }
            }
            for user in [bob, collaborators[1]] { waiters.append(FanOutTests.waiter(server, user.token, since: earlier)) }
            let eves = (0..<2).map { _ in FanOutTests.waiter(server, eve.token, since: now) }
            try server.waitForWaiters(waiters.count + eves.count)
            try waitUntil("every check to name its caller", within: 30) { !server.app.live.registryHasAnonymousWaiters }
            let (shared, acrossUsers) = (server.app.live.sharedAnswers, server.app.live.defaultSharedAnswers)
            let term = try server.createTerm(in: set, word: "for everyone", token: alice.token)
            for answer in try FanOutTests.expectOwnAnswers(server, waiters) { #expect(changedIDs(answer, "terms") == [term]) }
            // Eighteen answers: one check per cursor would do; the eight users at `now` took one between them.
            #expect(server.app.live.defaultSharedAnswers - acrossUsers >= 6)
            #expect(server.app.live.sharedAnswers - shared >= 13)
            Self.expectAsleep(eves)

            // Round 2: one transaction from psql (a wake of everyone, Eve too).
            let next = try cursor()
            waiters = []
            for user in [alice] + collaborators + [grace] {
                for _ in 0..<2 { waiters.append(FanOutTests.waiter(server, user.token, since: next)) }
            }
            try server.waitForWaiters(waiters.count + eves.count)
            try waitUntil("every check to name its caller", within: 30) { !server.app.live.registryHasAnonymousWaiters }
            let acrossUsersBefore = server.app.live.defaultSharedAnswers
            let mixed = try server.ownerQuery(
                """
                WITH t AS (INSERT INTO app.terms (set_id, word, definition) VALUES ($1, 'mixed', 'd') RETURNING id),
                     s AS (INSERT INTO app.study_sets (creator_id, title) VALUES ($2, 'another') RETURNING id),
                     f AS (INSERT INTO app.folders (owner_id, name) VALUES ($2, 'own') RETURNING id),
                     g AS (INSERT INTO app.set_collaborators (set_id, user_id) VALUES ($1, $3) RETURNING id),
                     r AS (UPDATE app.set_collaborators SET is_deleted = true WHERE set_id = $1 AND user_id = $4 RETURNING id)
                SELECT (SELECT id FROM t)::text, (SELECT id FROM s)::text, (SELECT id FROM f)::text
                """, [set, alice.id, grace.id, frank.id]
            ).rows[0]
            let answers = try FanOutTests.expectOwnAnswers(server, waiters)
            for (index, answer) in answers.enumerated() {
                let user = index / 2
                if user == 4 {
                    // Frank lost the set in that commit: its terms only as revoked stubs, never the new one as a row.
                    let entries = answer["changes"] as? [[String: Any]] ?? []
                    for entry in entries where entry["resource"] as? String == "terms" {
                        let data = entry["data"] as? [String: Any] ?? [:]
                        #expect(data["word"] == nil && data["revoked"] as? Bool == true, "\(data)")
                    }
                } else {
                    #expect(changedIDs(answer, "terms").contains(mixed[0] ?? ""), "\(index)")
                }
                #expect(changedIDs(answer, "study_sets").contains(mixed[1] ?? "") == (user == 0))
                #expect(changedIDs(answer, "folders").contains(mixed[2] ?? "") == (user == 0))
            }
            // Bob, Carol, Dave, Henry, Ivy and Judy read the same rows: one check between them.
            #expect(server.app.live.defaultSharedAnswers - acrossUsersBefore >= 4)
            Self.expectAsleep(eves)

            // Round 3: Alice renames the shared set itself. Every answer is still its caller's own, and
            // those who read the set share: its members read it as members, whoever owns it now
            // (DefaultWindowTests). The cursor is the one a client holds when nothing committed after
            // round 2: its xid is round 2's stamp, and round 2's rows, which they all read, sit at it.
            // A window that held them (ferry.window_keys from the cursor's xid, not after it) told rows
            // no page holds, and nobody shared. Grace's grant is at the cursor's xid too, which her evidence
            // saw: she may share since ferry.access_changed_users reads after it (before, she checked alone).
            _ = try cursor()  // the feed is past round 2: every transaction up to it has ended
            let stamp = try server.ownerQuery("SELECT _ferry_xid::text FROM app.terms WHERE id = $1::uuid", [mixed[0]]).rows[0][0]
            let third = ChangeCursor(afterXID: try #require(stamp.flatMap { UInt64($0) })).token
            waiters = []
            for user in [alice] + collaborators.filter({ $0.id != frank.id }) + [grace] {
                for _ in 0..<2 { waiters.append(FanOutTests.waiter(server, user.token, since: third)) }
            }
            try server.waitForWaiters(waiters.count + eves.count)
            try waitUntil("every check to name its caller", within: 30) { !server.app.live.registryHasAnonymousWaiters }
            let acrossUsersRenamed = server.app.live.defaultSharedAnswers
            let renamed = try server.client().request(
                "PATCH", "/v1/study_sets/\(set)", headers: [("Authorization", "Bearer \(alice.token)"), ("If-Match", "*")],
                json: ["title": "renamed"])
            #expect(renamed.status == 200, "\(renamed.status) \(renamed.text)")
            for answer in try FanOutTests.expectOwnAnswers(server, waiters) { #expect(changedIDs(answer, "study_sets") == [set]) }
            // Alice and six collaborators read the same row: one check between them, as in round 2.
            #expect(server.app.live.defaultSharedAnswers - acrossUsersRenamed >= 4)
            Self.expectAsleep(eves)
        }

        /// Eve reads nothing that changed: her waits are not answered.
        static func expectAsleep(_ eves: [Waiter]) {
            for eve in eves where eve.poll.isAnswered {
                let answer = try? eve.poll.response()
                Issue.record("Eve's wait was answered: \(answer?.status ?? 0) \(answer?.text ?? "")")
            }
        }
    }
}
