import Ferry
import FerryHTTPTestSupport
import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

/// Public rows and streams (core 0025, issue 46) over the wire, on an app of
/// their own: sets (owned, public by `is_public`), their terms (children) and
/// their members, and a stream `set` of a set and what hangs from it.
@Suite struct SyncStreamTests {
    static let app = [
        "0001_sets.sql": """
        CREATE SCHEMA app;
        CREATE TABLE app.sets (id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
                               owner_id uuid NOT NULL REFERENCES ferry.users, title text NOT NULL,
                               is_public boolean NOT NULL DEFAULT false);
        CREATE TABLE app.terms (id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
                                set_id uuid NOT NULL REFERENCES app.sets, word text NOT NULL DEFAULT '');
        CREATE TABLE app.members (id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
                                  set_id uuid NOT NULL REFERENCES app.sets, user_id uuid NOT NULL REFERENCES ferry.users);
        SELECT ferry.sync_owned('app.sets', owner => 'owner_id');
        SELECT ferry.sync_members('app.members', scope => 'set_id', member => 'user_id');
        SELECT ferry.sync_child('app.terms', parent => 'set_id');
        SELECT ferry.sync_public('app.sets', flag => 'is_public');
        SELECT ferry.sync_stream('set', scope => 'app.sets');
        """
    ]

    struct World {
        let server: TestServer
        let client: TestHTTPClient
        let alice: [(String, String)]
        let bob: [(String, String)]
        let carol: [(String, String)]
        let carolID: String

        func get(_ path: String, _ auth: [(String, String)]) throws -> TestHTTPClient.Response {
            try client.request("GET", path, headers: auth)
        }

        /// Every entry of a feed from `since` to its end, page by page: (resource, id, revoked).
        func feed(_ query: String, since: String? = nil, limit: Int = 500, _ auth: [(String, String)]) throws
            -> (entries: [(String, String, Bool)], cursor: String)
        {
            var cursor = since
            var entries: [(String, String, Bool)] = []
            while true {
                let path = "/v1/changes?limit=\(limit)" + (query.isEmpty ? "" : "&" + query) + (cursor.map { "&since=\($0)" } ?? "")
                let page = try get(path, auth)
                try #require(page.status == 200, "\(path): \(page.text.prefix(400))")
                for change in page.object["changes"] as? [[String: Any]] ?? [] {
                    let data = change["data"] as? [String: Any] ?? [:]
                    entries.append((change["resource"] as? String ?? "", data["id"] as? String ?? "", data["revoked"] as? Bool == true))
                }
                cursor = page.object["cursor"] as? String
                if page.object["has_more"] as? Bool != true { break }
            }
            return (entries, cursor ?? "")
        }

        /// ``feed(_:since:limit:_:)`` read on until `done` holds of what arrived
        /// (the frontier waits for transactions anywhere in the cluster: other
        /// tests' writes may hold it back a moment).
        func feed(
            _ query: String, since: String? = nil, limit: Int = 500, _ auth: [(String, String)],
            until done: ([(String, String, Bool)]) -> Bool
        ) throws -> (entries: [(String, String, Bool)], cursor: String) {
            var all: [(String, String, Bool)] = []
            var cursor = since
            let deadline = ContinuousClock.now + .seconds(30)
            while true {
                let part = try feed(query, since: cursor, limit: limit, auth)
                all += part.entries
                cursor = part.cursor
                if done(all) || ContinuousClock.now > deadline { return (all, part.cursor) }
                usleep(20_000)
            }
        }
    }

    static func world(_ configure: (inout FerryConfiguration) -> Void = { _ in }) throws -> World {
        let database = try ScratchDatabase.create(prefix: "ferry_streams")
        try database.applyMigrations(appFiles: app)
        let owner = try database.connect()
        defer { owner.close() }
        var tokens: [String] = []
        var carolID = ""
        for name in ["alice", "bob", "carol"] {
            let id = try owner.query("SELECT ferry.create_user($1, $1 || '-password-1')::text", [name]).first?[0] ?? ""
            if name == "carol" { carolID = id }
            tokens.append(try #require(try AuthService.issueToken(name: name, ttlSeconds: 600, connection: owner)).token)
        }
        let server = try TestServer(database: database, configure)
        return World(
            server: server, client: server.client(), alice: [("Authorization", "Bearer \(tokens[0])")],
            bob: [("Authorization", "Bearer \(tokens[1])")], carol: [("Authorization", "Bearer \(tokens[2])")],
            carolID: carolID)
    }

    /// Alice's set with `terms` terms; its id and its terms' ids.
    static func set(_ w: World, public isPublic: Bool, terms: Int) throws -> (id: String, terms: [String]) {
        let made = try w.client.request("POST", "/v1/sets", headers: w.alice, json: ["title": "set", "is_public": isPublic])
        try #require(made.status == 201, "\(made.text)")
        let id = try #require(made.object["id"] as? String)
        var ids: [String] = []
        for n in 0..<terms {
            let term = try w.client.request("POST", "/v1/terms", headers: w.alice, json: ["set_id": id, "word": "w\(n)"])
            try #require(term.status == 201, "\(term.text)")
            ids.append(try #require(term.object["id"] as? String))
        }
        return (id, ids)
    }

    /// A term Alice adds to her set `set` over HTTP: its id.
    static func term(_ w: World, in set: String, word: String) throws -> String {
        let made = try w.client.request("POST", "/v1/terms", headers: w.alice, json: ["set_id": set, "word": word])
        try #require(made.status == 201, "\(made.text)")
        return try #require(made.object["id"] as? String)
    }

    @Test func aPublicSetIsReadByItsSubscriberAndSentToNoOtherDevice() throws {
        let w = try Self.world()
        defer { w.server.stop() }
        let open = try Self.set(w, public: true, terms: 3)
        let closed = try Self.set(w, public: false, terms: 2)

        // GET and Index serve the public set to any signed-in user; writes through it are refused.
        #expect(try w.get("/v1/sets/\(open.id)", w.bob).status == 200)
        #expect(try w.get("/v1/sets/\(closed.id)", w.bob).status == 404)
        let terms = try w.get("/v1/terms?set_id=\(open.id)", w.bob)
        #expect((terms.object["data"] as? [Any])?.count == 3, "\(terms.text.prefix(300))")
        // As docs/API.md says: as a write to a row the caller cannot see (the write's policies never see it).
        let patch = try w.client.request("PATCH", "/v1/sets/\(open.id)", headers: w.bob, json: ["title": "mine", "revision": 1])
        #expect(patch.status == 404, "\(patch.text)")
        let added = try w.client.request("POST", "/v1/terms", headers: w.bob, json: ["set_id": open.id, "word": "spam"])
        #expect(added.status == 422, "\(added.text)")
        let entry = ((added.json as? [String: Any])?["errors"] as? [[String: Any]])?.first
        #expect(entry?["field"] as? String == "set_id" && entry?["reason"] as? String == "not_found", "\(added.text)")
        // A batch that reads the set first still cannot write through it.
        let batch = try w.client.request(
            "POST", "/v1/batch", headers: w.bob,
            json: [
                "operations": [
                    ["method": "GET", "path": "/v1/sets/\(open.id)"],
                    ["method": "POST", "path": "/v1/terms", "body": ["set_id": open.id, "word": "spam"]],
                ]
            ])
        #expect(!batch.text.contains("\"spam\"") || batch.status >= 400, "\(batch.text.prefix(400))")
        #expect(try w.server.database.column("SELECT count(*) FROM app.terms WHERE word = 'spam'") == ["0"])

        // Alice's default stream is as before: both sets, their terms.
        #expect(try w.feed("", w.alice) { $0.count >= 7 }.entries.count == 2 + 5)
        // The default stream (read after the frontier passed them): nothing of either set reaches Bob's device.
        let bobDefault = try w.feed("", w.bob)
        #expect(bobDefault.entries.isEmpty, "\(bobDefault.entries)")

        // Subscribed: the set and its terms, in pages of 2, and nothing of the other set.
        let stream = try w.feed("stream=set:\(open.id)", limit: 2, w.bob) { $0.count >= 4 }
        let expected = Set([open.id] + open.terms)
        #expect(Set(stream.entries.map(\.1)) == expected)
        #expect(stream.entries.count == expected.count, "no entry twice in one pass: \(stream.entries)")

        // The owner's subscription is that set's tree too, not every row she reads.
        let own = try w.feed("stream=set:\(closed.id)", w.alice) { $0.count >= 3 }
        #expect(Set(own.entries.map(\.1)) == Set([closed.id] + closed.terms), "\(own.entries)")

        // A commit in the set reaches the subscription, and not the default stream.
        let later = try w.client.request("POST", "/v1/terms", headers: w.alice, json: ["set_id": open.id, "word": "new"])
        let newID = try #require(later.object["id"] as? String)
        let next = try w.feed("stream=set:\(open.id)", since: stream.cursor, w.bob) { !$0.isEmpty }
        #expect(next.entries.map(\.1) == [newID])
        #expect(try w.feed("", since: bobDefault.cursor, w.bob).entries.isEmpty)
    }

    /// A download of a public set's stream whose first page is read as no user (the
    /// public view) and a later one as the caller (a long poll reads as the caller): the
    /// member rows only a member reads, older than the first page's end, still come with
    /// the caller's own grant, though that grant is older than the download's base. The
    /// public view saw no grant of the caller's, so only public grants may be left out
    /// below the base.
    @Test func aMembersRowsComeWhenADownloadTurnsFromThePublicViewToTheCallers() throws {
        let w = try Self.world()
        defer { w.server.stop() }
        let made = try w.client.request("POST", "/v1/sets", headers: w.alice, json: ["title": "open", "is_public": true])
        let set = try #require(made.object["id"] as? String)
        // Carol's member row first, then the terms: older than the first page's end.
        let carol = try w.client.request("POST", "/v1/members", headers: w.alice, json: ["set_id": set, "user_id": w.carolID])
        let carolRow = try #require(carol.object["id"] as? String, "\(carol.text)")
        for n in 0..<4 { _ = try Self.term(w, in: set, word: "w\(n)") }
        let bobID = try #require(try w.server.ownerQuery("SELECT id::text FROM ferry.users WHERE name = 'bob'").first?[0])
        let bob = try w.client.request("POST", "/v1/members", headers: w.alice, json: ["set_id": set, "user_id": bobID])
        #expect(bob.status == 201, "\(bob.text)")
        // Bob's device downloads the stream from the start: a first page read as no user...
        let first = try w.get("/v1/changes?stream=set:\(set)&limit=2", w.bob)
        try #require(first.status == 200 && first.object["has_more"] as? Bool == true, "\(first.text)")
        var received = Set((first.object["changes"] as? [[String: Any]] ?? []).compactMap { ($0["data"] as? [String: Any])?["id"] as? String })
        #expect(!received.contains(carolRow), "the public view holds no member row")
        // ...then on, as long polls, read as Bob.
        var cursor = try #require(first.object["cursor"] as? String)
        for _ in 0..<20 {
            let page = try w.get("/v1/changes?stream=set:\(set)&limit=2&wait=1&since=\(cursor)", w.bob)
            try #require(page.status == 200, "\(page.text)")
            for change in page.object["changes"] as? [[String: Any]] ?? [] {
                if let id = (change["data"] as? [String: Any])?["id"] as? String { received.insert(id) }
            }
            cursor = try #require(page.object["cursor"] as? String)
            if page.object["has_more"] as? Bool != true { break }
        }
        #expect(received.contains(carolRow), "Carol's member row, which Bob reads as a member, never came")
    }

    /// A member added to a private set after its rows downloads its stream from the start,
    /// in pages: each row once (each of a set's rows came twice, once at its own position
    /// and again with the member's grant, which is older than the download), and once
    /// again after the member is removed and added back. The default stream's download from
    /// the start the same: no revoked entry (the device holds nothing to revoke), each row
    /// once, though the grant, the revocation and the second grant are all in its range.
    @Test func aDownloadFromTheStartOfASharedSetHasEachRowOnce() throws {
        let w = try Self.world()
        defer { w.server.stop() }
        let (set, terms) = try Self.set(w, public: false, terms: 7)
        let member = try w.client.request("POST", "/v1/members", headers: w.alice, json: ["set_id": set, "user_id": w.carolID])
        let memberID = try #require(member.object["id"] as? String, "\(member.text)")
        let expected = Set([set, memberID] + terms)
        // Read on until the rows came (``World/feed(_:since:limit:_:until:)``): under load another
        // transaction of the cluster may hold the frontier a moment, and the download then
        // ends early with has_more false, to go on from its cursor, as a device's does.
        func once(_ query: String, _ what: String, limit: Int) throws {
            let (entries, _) = try w.feed(query, limit: limit, w.carol) { Set($0.map(\.1)).isSuperset(of: expected) }
            let ids = entries.map(\.1)
            #expect(Set(ids).isSuperset(of: expected), "\(what), limit \(limit): \(entries)")
            #expect(ids.count == Set(ids).count, "\(what), limit \(limit): each row once, not \(entries)")
            #expect(!entries.contains { $0.2 }, "\(what), limit \(limit): nothing to revoke from the start: \(entries)")
        }
        for limit in [2, 3, 100] {
            try once("stream=set:\(set)", "the stream", limit: limit)
            try once("", "the default stream", limit: limit)
        }
        // Removed and added back: a revocation and a second grant, both older than a new download.
        let removed = try w.client.request("DELETE", "/v1/members/\(memberID)", headers: w.alice + [("If-Match", "*")])
        #expect(removed.status == 200, "\(removed.text)")
        let again = try w.client.request("POST", "/v1/members", headers: w.alice, json: ["set_id": set, "user_id": w.carolID])
        let againID = try #require(again.object["id"] as? String, "\(again.text)")
        let back = Set([set, againID] + terms)
        for limit in [2, 100] {
            for query in ["stream=set:\(set)", ""] {
                let (entries, _) = try w.feed(query, limit: limit, w.carol) { Set($0.map(\.1)).isSuperset(of: back) }
                let live = entries.filter { $0.1 != memberID }.map(\.1)
                #expect(Set(live) == back, "\(query), limit \(limit): \(entries)")
                #expect(live.count == back.count, "\(query), limit \(limit): each row once, not \(entries)")
                #expect(!entries.contains { $0.2 }, "\(query), limit \(limit): \(entries)")
            }
        }
    }

    /// A member writes the set as its owner does, but only the owner makes it public or
    /// private: publishing shows the set and its tree to every signed-in user.
    @Test func onlyTheOwnerPublishesASet() throws {
        let w = try Self.world()
        defer { w.server.stop() }
        let (set, _) = try Self.set(w, public: false, terms: 1)
        let bobID = try #require(try w.server.ownerQuery("SELECT id::text FROM ferry.users WHERE name = 'bob'").first?[0])
        let member = try w.client.request("POST", "/v1/members", headers: w.alice, json: ["set_id": set, "user_id": bobID])
        #expect(member.status == 201, "\(member.text)")
        let any = [("If-Match", "*")]
        for flag in [true, false] {
            if !flag { #expect(try w.client.request("PATCH", "/v1/sets/\(set)", headers: w.alice + any, json: ["is_public": true]).status == 200) }
            let publish = try w.client.request("PATCH", "/v1/sets/\(set)", headers: w.bob + any, json: ["is_public": flag])
            if flag {
                #expect(publish.status == 422, "\(publish.text)")
                #expect(publish.errors.first?["reason"] as? String == "not_allowed", "\(publish.text)")
            } else {
                #expect(publish.status == 422, "a member makes the owner's public set private neither: \(publish.text)")
            }
        }
        #expect(try w.get("/v1/sets/\(set)", w.carol).status == 200, "still public, as its owner made it")
        let revision = try #require(try w.get("/v1/sets/\(set)", w.bob).object["revision"] as? Int)
        let batch = try w.client.request(
            "PATCH", "/v1/sets", headers: w.bob, json: [["id": set, "revision": revision, "is_public": false, "title": "mine now"]])
        #expect(batch.status == 422 && batch.errors.first?["reason"] as? String == "not_allowed", "\(batch.text)")
        // What a member may: the title. And the app's own SQL (no user) publishes as it likes.
        #expect(try w.client.request("PATCH", "/v1/sets/\(set)", headers: w.bob + any, json: ["title": "renamed"]).status == 200)
        _ = try w.server.ownerQuery("UPDATE app.sets SET is_public = false WHERE id = '\(set)'")
        #expect(try w.get("/v1/sets/\(set)", w.carol).status == 404)
    }

    /// A row the caller reads but may not write (a member's own member row: only the owner
    /// removes members) answers a write 403, not 404: a client whose delete meets 404 takes
    /// the row for gone already and drops it, while it lives on at the server.
    @Test func aRowTheCallerReadsButMayNotWriteAnswers403() throws {
        let w = try Self.world()
        defer { w.server.stop() }
        let (set, _) = try Self.set(w, public: false, terms: 0)
        let bobID = try #require(try w.server.ownerQuery("SELECT id::text FROM ferry.users WHERE name = 'bob'").first?[0])
        let member = try w.client.request("POST", "/v1/members", headers: w.alice, json: ["set_id": set, "user_id": bobID])
        let row = try #require(member.object["id"] as? String, "\(member.text)")
        #expect(try w.get("/v1/members/\(row)", w.bob).status == 200)
        let any = [("If-Match", "*")]
        let leave = try w.client.request("DELETE", "/v1/members/\(row)", headers: w.bob + any)
        #expect(leave.status == 403 && leave.code == "forbidden", "\(leave.text)")
        #expect(leave.errors.first?["id"] as? String == row && leave.object["current"] == nil, "\(leave.text)")
        let patch = try w.client.request("PATCH", "/v1/members/\(row)", headers: w.bob + any, json: ["user_id": bobID])
        #expect(patch.status == 403, "\(patch.text)")
        let bulk = try w.client.request("DELETE", "/v1/members", headers: w.bob, json: [["id": row, "revision": 1]])
        #expect(bulk.status == 403 && bulk.errors.first?["code"] as? String == "forbidden", "\(bulk.text)")
        // One the caller cannot read at all is still 404: nothing said of it.
        #expect(try w.client.request("DELETE", "/v1/members/\(row)", headers: w.carol + any).status == 404)
        #expect(try w.get("/v1/members/\(row)", w.bob).status == 200, "still a member")
        #expect(try w.client.request("DELETE", "/v1/members/\(row)", headers: w.alice + any).status == 200, "the owner removes")
    }

    /// Reads turn public reads on and off (two statements) only in a schema with a public rule.
    @Test func theCatalogKnowsWhetherAnyRowCanBePublic() throws {
        let w = try Self.world()
        defer { w.server.stop() }
        #expect(w.server.app.schema.catalog.hasPublicRows)
        let todo = try ScratchDatabase.create(prefix: "ferry_streams_none")
        try todo.applyMigrations(app: .todo)
        let server = try TestServer(database: todo)
        defer { server.stop() }
        #expect(!server.app.schema.catalog.hasPublicRows)
    }

    /// GET /v1 and the OpenAPI document list the streams (what a subscription
    /// carries, as the feed reads it) and which resources have public rows.
    @Test func theListingNamesTheStreamsAndThePublicResources() throws {
        let w = try Self.world()
        defer { w.server.stop() }
        let listing = try w.get("/v1", w.bob)
        try #require(listing.status == 200, "\(listing.text.prefix(300))")
        let streams = listing.object["streams"] as? [[String: Any]] ?? []
        #expect(streams.count == 1, "\(listing.text.prefix(600))")
        #expect(streams.first?["name"] as? String == "set" && streams.first?["root"] as? String == "sets")
        #expect(streams.first?["path"] as? String == "/v1/changes?stream=set:{id}")
        #expect(streams.first?["resources"] as? [String] == ["members", "sets", "terms"], "\(streams)")
        var publicRows: [String: String] = [:]
        for resource in listing.object["resources"] as? [[String: Any]] ?? [] {
            guard let flag = resource["public"] as? [String: Any] else {
                #expect(resource["public"] is NSNull, "\(resource)")
                continue
            }
            publicRows[resource["name"] as? String ?? ""] = "\(flag["resource"] ?? "").\(flag["flag"] ?? "")"
        }
        // The set by its flag, its terms through it; member rows stay private.
        #expect(publicRows == ["sets": "sets.is_public", "terms": "sets.is_public"])

        // The OpenAPI document (no token) says the same, for generators.
        let document = try w.client.request("GET", "/openapi.json")
        try #require(document.status == 200)
        let described = document.object["x-ferry-streams"] as? [[String: Any]] ?? []
        #expect(described.map { $0["name"] as? String } == ["set"] && described.first?["resources"] as? [String] == ["members", "sets", "terms"])
        let schemas = (document.object["components"] as? [String: Any])?["schemas"] as? [String: Any] ?? [:]
        let term = schemas.values.compactMap { ($0 as? [String: Any])?["x-ferry-resource"] as? [String: Any] }
            .first { $0["name"] as? String == "terms" }
        #expect((term?["public"] as? [String: Any])?["flag"] as? String == "is_public", "\(schemas.keys.sorted())")

        // The study example: its stream `set`, public sets (examples/study/migrations/0019_public_sets.sql).
        let study = try ScratchDatabase.create(prefix: "ferry_streams_listing")
        try study.applyMigrations()
        let server = try TestServer(database: study)
        defer { server.stop() }
        let owner = try study.connect()
        defer { owner.close() }
        _ = try owner.query("SELECT ferry.create_user('dana', 'dana-password-1')")
        let token = try #require(try AuthService.issueToken(name: "dana", ttlSeconds: 600, connection: owner)).token
        let plain = try server.client().request("GET", "/v1", headers: [("Authorization", "Bearer \(token)")])
        let plainStreams = plain.object["streams"] as? [[String: Any]] ?? []
        #expect(plainStreams.map { $0["root"] as? String } == ["study_sets"], "\(plain.text.prefix(400))")
        #expect(plainStreams.first?["resources"] as? [String] == ["set_collaborators", "study_sets", "terms"])
        let studyPublic = (plain.object["resources"] as? [[String: Any]] ?? []).compactMap { resource -> String? in
            guard let flag = resource["public"] as? [String: Any] else { return nil }
            return "\(resource["name"] ?? ""): \(flag["resource"] ?? "").\(flag["flag"] ?? "")"
        }
        #expect(studyPublic == ["study_sets: study_sets.is_public", "terms: study_sets.is_public"], "\(studyPublic)")
    }

    @Test func aStreamTheUserMayNotReadAnswersAsOneThatDoesNotExist() throws {
        let w = try Self.world()
        defer { w.server.stop() }
        let closed = try Self.set(w, public: false, terms: 2)
        let open = try Self.set(w, public: true, terms: 1)
        let unknown = UUID().uuidString.lowercased()
        func answer(_ id: String, since: String? = nil) throws -> (Int, [Any], Bool, Bool) {
            let page = try w.get("/v1/changes?stream=set:\(id)" + (since.map { "&since=\($0)" } ?? ""), w.bob)
            let cursor = page.object["cursor"] as? String ?? ""
            return (page.status, page.object["changes"] as? [Any] ?? ["missing"], page.object["has_more"] as? Bool ?? true, cursor.hasPrefix("1"))
        }
        let hidden = try answer(closed.id)
        let missing = try answer(unknown)
        #expect(hidden.0 == 200 && hidden.1.isEmpty && !hidden.2 && hidden.3)
        #expect(hidden.0 == missing.0 && hidden.1.count == missing.1.count && hidden.2 == missing.2 && hidden.3 == missing.3)
        // From another stream's cursor too.
        let cursor = try w.feed("stream=set:\(open.id)", w.bob) { $0.count >= 2 }.cursor
        _ = try w.client.request("POST", "/v1/terms", headers: w.alice, json: ["set_id": closed.id, "word": "more"])
        let hiddenLater = try answer(closed.id, since: cursor)
        let missingLater = try answer(unknown, since: cursor)
        #expect(hiddenLater.1.isEmpty && missingLater.1.isEmpty && hiddenLater.0 == missingLater.0)
        // Names and ids that cannot be: 400, whoever asks.
        #expect(try w.get("/v1/changes?stream=nope:\(unknown)", w.bob).status == 400)
        #expect(try w.get("/v1/changes?stream=set:not-a-uuid", w.bob).status == 400)
        #expect(try w.get("/v1/changes?stream=set", w.bob).status == 400)
        #expect(try w.get("/v1/changes?stream=set:\(unknown)", []).status == 401)
    }

    @Test func revocationInsideAStreamSendsRevokedEntries() throws {
        let w = try Self.world()
        defer { w.server.stop() }
        // A public set that turns private: its subscriber gets revoked entries for the set and its terms.
        let open = try Self.set(w, public: true, terms: 2)
        let first = try w.feed("stream=set:\(open.id)", w.bob) { $0.count >= 3 }
        #expect(first.entries.count == 3)
        let closing = try w.client.request("PATCH", "/v1/sets/\(open.id)", headers: w.alice, json: ["is_public": false, "revision": 1])
        #expect(closing.status == 200, "\(closing.text)")
        let revoked = try w.feed("stream=set:\(open.id)", since: first.cursor, w.bob) { $0.count >= 3 }
        #expect(Set(revoked.entries.filter(\.2).map(\.1)) == Set([open.id] + open.terms), "\(revoked.entries)")
        #expect(revoked.entries.allSatisfy { $0.2 })
        // Public again: the subscriber receives it all again, from the cursor it holds.
        #expect(try w.client.request("PATCH", "/v1/sets/\(open.id)", headers: w.alice, json: ["is_public": true, "revision": 2]).status == 200)
        let back = try w.feed("stream=set:\(open.id)", since: revoked.cursor, w.bob) { $0.count >= 3 }
        #expect(Set(back.entries.filter { !$0.2 }.map(\.1)) == Set([open.id] + open.terms), "\(back.entries)")

        // A member removed from a private set: revoked entries in their stream of it.
        let shared = try Self.set(w, public: false, terms: 1)
        let member = try w.client.request("POST", "/v1/members", headers: w.alice, json: ["set_id": shared.id, "user_id": w.carolID])
        try #require(member.status == 201, "\(member.text)")
        let memberID = try #require(member.object["id"] as? String)
        let carol = try w.feed("stream=set:\(shared.id)", w.carol) { $0.count >= 3 }
        #expect(Set(carol.entries.map(\.1)) == Set([shared.id, memberID] + shared.terms))
        let removal = try w.client.request("DELETE", "/v1/members/\(memberID)?revision=1", headers: w.alice)
        #expect(removal.status < 300, "\(removal.text)")
        let gone = try w.feed("stream=set:\(shared.id)", since: carol.cursor, w.carol) { $0.count >= 3 }
        let revokedIDs = Set(gone.entries.filter(\.2).map(\.1))
        #expect(revokedIDs == Set([shared.id] + shared.terms), "\(gone.entries)")
        // Her own member row comes as its tombstone (she still reads it), not as revoked.
        #expect(gone.entries.contains { $0.1 == memberID && !$0.2 })
    }

    @Test func aLongPollOnAStreamWakesForACommitInIt() throws {
        let w = try Self.world()
        defer { w.server.stop() }
        let open = try Self.set(w, public: true, terms: 1)
        let cursor = try w.feed("stream=set:\(open.id)", w.bob) { $0.count >= 2 }.cursor
        let port = w.server.port
        let bob = w.bob
        let waiter = startThread { () -> Result<(Int, String, Duration), any Error> in
            Result { () throws -> (Int, String, Duration) in
                let client = TestHTTPClient(port: port)
                let start = ContinuousClock.now
                let page = try client.request("GET", "/v1/changes?stream=set:\(open.id)&since=\(cursor)&wait=60", headers: bob)
                return (page.status, page.text, ContinuousClock.now - start)
            }
        }
        // Wait for the waiter to be parked (the registry counts it), then commit.
        try waitUntil("the stream's waiter to park", within: 30) { w.server.app.live.waiters == 1 && w.server.app.live.checksRunning == 0 }
        let started = ContinuousClock.now
        let added = try w.client.request("POST", "/v1/terms", headers: w.alice, json: ["set_id": open.id, "word": "late"])
        let id = try #require(added.object["id"] as? String)
        let (status, text, _) = try waiter.wait().get()
        #expect(status == 200)
        #expect(text.contains(id))
        #expect(ContinuousClock.now - started < .seconds(45), "woken by the commit, not by the wait's deadline")
    }
}
