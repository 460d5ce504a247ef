import Ferry
import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Testing

extension ChangesSuites {
    /// The feed's HTTP behaviour against a real PostgreSQL.
    @Suite struct FeedTests {
        @Test func fullSyncThenIncrementalThen304() throws {
            let server = try TestServer()
            defer { server.stop() }
            let alice = try server.user("alice")
            let set = try server.makeSet(for: alice.id, title: "Spanish")
            let terms = try server.makeTerms(in: set, count: 3)
            let feed = FeedFollower(server: server, token: alice.token)
            try feed.catchUp(pastXID: try server.maxXID())
            #expect(feed.rows(of: "terms").keys.sorted() == terms.sorted())
            let stored = try #require(feed.rows["study_sets/\(set)"])
            #expect(stored["title"] as? String == "Spanish")
            #expect(stored["creator_id"] as? String == alice.id)
            #expect(stored["revision"] as? Int == 1)
            #expect(stored.keys.sorted() == ["creator_id", "description", "id", "is_deleted", "is_public", "last_modified", "revision", "title"])

            // Nothing changed: 304 with If-None-Match, an empty page without.
            let cursor = try #require(feed.cursor)
            let auth = ("Authorization", "Bearer \(alice.token)")
            let notModified = try feed.client.request(
                "GET", "/v1/changes?since=\(cursor)",
                headers: [auth, ("If-None-Match", "\"\(cursor)\"")])
            #expect(notModified.status == 304)
            #expect(notModified.body.isEmpty)
            #expect(notModified.header("ETag") != nil)
            let weak = try feed.client.request("GET", "/v1/changes?since=\(cursor)", headers: [auth, ("If-None-Match", "W/\"\(cursor)\"")])
            #expect(weak.status == 304)
            let other = try feed.client.request("GET", "/v1/changes?since=\(cursor)", headers: [auth, ("If-None-Match", "\"other\"")])
            #expect(other.status == 200)
            #expect((other.object["changes"] as? [Any])?.isEmpty == true)

            // A change, then a delete: the 304 check now answers 200 with it.
            _ = try server.ownerQuery("UPDATE app.terms SET word = 'hola' WHERE id = $1", [terms[0]])
            _ = try server.ownerQuery("DELETE FROM app.terms WHERE id = $1", [terms[1]])
            let xid = try server.maxXID()
            // The frontier passes the change once other suites' transactions end.
            let changed = try waitFor("the feed to answer other than 304", within: 60, every: 0.05) {
                let response = try feed.client.request("GET", "/v1/changes?since=\(cursor)", headers: [auth, ("If-None-Match", "\"\(cursor)\"")])
                return response.status == 304 ? nil : response
            }
            #expect(changed.status == 200)
            try feed.catchUp(pastXID: xid)
            #expect(feed.rows["terms/\(terms[0])"]?["word"] as? String == "hola")
            #expect(feed.rows["terms/\(terms[0])"]?["revision"] as? Int == 2)
            let tombstone = try #require(feed.rows["terms/\(terms[1])"])
            // A tombstone names its parent, so a client can drop it from the set's list.
            #expect(tombstone.keys.sorted() == ["id", "is_deleted", "last_modified", "revision", "set_id"])
            #expect(tombstone["set_id"] as? String == set)
            #expect(tombstone["is_deleted"] as? Bool == true)
        }

        @Test func limitAndHasMoreAcrossManyPages() throws {
            let server = try TestServer()
            defer { server.stop() }
            let bob = try server.user("bob")
            let set = try server.makeSet(for: bob.id)
            // One big transaction (all rows share one xid) and many small ones.
            let bulk = try server.makeTerms(in: set, count: 230)
            var small: [String] = []
            for _ in 0..<25 { small += try server.makeTerms(in: set, count: 1) }
            let xid = try server.maxXID()
            let feed = FeedFollower(server: server, token: bob.token)
            var pages = 0
            var delivered: [String] = []
            let deadline = Date().addingTimeInterval(60)
            while true {
                let (response, hasMore) = try feed.poll(limit: 7)
                let changes = response.object["changes"] as? [[String: Any]] ?? []
                #expect(changes.count <= 7)
                if hasMore { #expect(changes.count == 7) }
                delivered += changes.compactMap { ($0["data"] as? [String: Any])?["id"] as? String }
                pages += 1
                if !hasMore, let p = feed.position, p.position == nil, p.afterXID >= xid { break }
                #expect(Date() < deadline)
                if Date() > deadline { return }
            }
            #expect(pages >= (230 + 25 + 1) / 7)
            #expect(Set(feed.rows(of: "terms").keys) == Set(bulk + small))
            // Whole order: each row once (nothing changed meanwhile).
            #expect(delivered.count == Set(delivered).count)
            // limit bounds
            let auth = ("Authorization", "Bearer \(bob.token)")
            for bad in ["0", "-1", "5001", "abc", "", "1.5"] {
                let response = try feed.client.request("GET", "/v1/changes?limit=\(bad)", headers: [auth])
                #expect(response.status == 400, "limit=\(bad)")
                #expect(response.object["code"] as? String == "invalid_query")
            }
            #expect(try feed.client.request("GET", "/v1/changes?limit=5000", headers: [auth]).status == 200)
        }

        @Test func resourcesFilter() throws {
            let server = try TestServer()
            defer { server.stop() }
            let carol = try server.user("carol")
            let set = try server.makeSet(for: carol.id)
            _ = try server.makeTerms(in: set, count: 2)
            let feed = FeedFollower(server: server, token: carol.token)
            let xid = try server.maxXID()
            let deadline = Date().addingTimeInterval(60)
            repeat {
                _ = try feed.poll(resources: "study_sets")
            } while (feed.position?.afterXID ?? 0) < xid && Date() < deadline
            #expect(feed.rows.keys.allSatisfy { $0.hasPrefix("study_sets/") })
            #expect(feed.rows.count == 1)
            let auth = ("Authorization", "Bearer \(carol.token)")
            for bad in ["nope", "terms,", ",", "users", "terms,nope"] {
                let response = try feed.client.request("GET", "/v1/changes?resources=\(bad)", headers: [auth])
                #expect(response.status == 400, "resources=\(bad)")
                #expect(response.object["code"] as? String == "invalid_query")
            }
            #expect(try feed.client.request("GET", "/v1/changes?bogus=1", headers: [auth]).status == 400)
            #expect(try feed.client.request("GET", "/v1/changes").status == 401)
        }

        @Test func malformedCursorsAre400() throws {
            let server = try TestServer()
            defer { server.stop() }
            let dan = try server.user("dan")
            let client = server.client()
            let auth = ("Authorization", "Bearer \(dan.token)")
            let wrongType = ChangeCursor(afterXID: 10, position: ("terms", "not-a-uuid")).token
            // Not UTF-8 at all: the HTTP layer refuses it first.
            #expect(try client.request("GET", "/v1/changes?since=1%FF%FE", headers: [auth]).status == 400)
            for bad in ["x", "1", "1AAAA", "0AAAAAAAAAAAA", "1%2B%2F", wrongType, String(repeating: "A", count: 3000)] {
                let response = try client.request("GET", "/v1/changes?since=\(bad)", headers: [auth])
                #expect(response.status == 400, "since=\(bad.prefix(30))")
                #expect(response.object["code"] as? String == "invalid_query")
            }
            // The empty cursor is the full sync.
            #expect(try client.request("GET", "/v1/changes?since=", headers: [auth]).status == 200)
        }

        /// A cursor is a position and nothing else: another user's cursor, or one
        /// naming a row the caller cannot see, gives exactly the caller's own
        /// changes after that position.
        @Test func cursorsFromOtherUsersRevealNothing() throws {
            let server = try TestServer()
            defer { server.stop() }
            let erin = try server.user("erin")
            let frank = try server.user("frank")
            let erinSet = try server.makeSet(for: erin.id)
            let erinTerms = try server.makeTerms(in: erinSet, count: 20)
            let frankSet = try server.makeSet(for: frank.id)
            let frankTerms = try server.makeTerms(in: frankSet, count: 5)
            let xid = try server.maxXID()

            // Erin pages through her feed; take a position cursor from the middle.
            let erinFeed = FeedFollower(server: server, token: erin.token)
            var erinPosition: String?
            while erinPosition == nil {
                let (_, hasMore) = try erinFeed.poll(limit: 5)
                if hasMore, erinFeed.position?.position?.resource == "terms" { erinPosition = erinFeed.cursor }
            }
            let position = try #require(erinPosition)
            #expect(!frankTerms.isEmpty && !erinTerms.isEmpty)

            // Frank uses it: he gets his own rows only.
            let frankFeed = FeedFollower(server: server, token: frank.token)
            frankFeed.cursor = position
            try frankFeed.catchUp(pastXID: xid)
            #expect(frankFeed.rows.keys.allSatisfy { !$0.contains(erinSet) && !erinTerms.contains(String($0.split(separator: "/")[1])) })

            // Same position, with Erin's hidden id or a random id: identical answers.
            let p = try #require(ChangeCursor(token: position))
            let hiddenID = try #require(p.position?.id)
            let client = server.client()
            let auth = ("Authorization", "Bearer \(frank.token)")
            let ids = { (r: TestHTTPClient.Response) in
                (r.object["changes"] as? [[String: Any]] ?? []).compactMap { ($0["data"] as? [String: Any])?["id"] as? String }
            }
            let random = ChangeCursor(afterXID: p.afterXID, position: ("terms", UUID().uuidString.lowercased())).token
            // The two reads are compared at one frontier: another suite's write running on the
            // shared server holds the feed for a moment, and a read in that moment delivers
            // less. Read the pair again until both see Frank's rows (or a minute has passed).
            var withHidden = try client.request("GET", "/v1/changes?since=\(position)", headers: [auth])
            var withRandom = withHidden
            _ = try eventually(within: 60, every: 0.2) {
                withHidden = try client.request("GET", "/v1/changes?since=\(position)", headers: [auth])
                withRandom = try client.request("GET", "/v1/changes?since=\(random)", headers: [auth])
                return !ids(withHidden).isEmpty && !ids(withRandom).isEmpty && ids(withHidden).count == ids(withRandom).count
            }
            #expect(withHidden.status == 200 && withRandom.status == 200)
            // Both deliver exactly Frank's rows after the position, in the same order;
            // neither the answer nor the status depends on whose row the cursor named.
            #expect(Set(ids(withHidden)).isSubset(of: Set(frankTerms + [frankSet])))
            #expect(Set(ids(withRandom)).isSubset(of: Set(frankTerms + [frankSet])))
            #expect(!ids(withHidden).contains(hiddenID))
            #expect(ids(withHidden) == ids(withRandom))
            // The cursor itself carries only a number, a resource name and the id
            // its holder last received: nothing about other users.
            #expect(p.position?.resource == "terms" && erinTerms.contains(hiddenID))
        }
    }
}
