import Ferry
import FerryHTTPTestSupport
import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

/// "See as a user" shows what the user's own requests get, under the user's
/// own Row Level Security, and explains why a device is where it is.
@Suite struct ConsoleUserViewTests {
    /// The heart of the console: a collaborator was removed, and their device,
    /// polling from the cursor it held, is told why its rows disappear.
    @Test func aRevokedCollaboratorsDeviceIsExplained() throws {
        let fixture = try ConsoleFixture()
        defer { fixture.stop() }
        let story = try fixture.revokedCollaborator()
        // The device's own poll first, once the revocation is in its feed: a transaction of the
        // cluster that ends between the frontier's snapshot and its look at the backends holds
        // the frontier a moment (docs/changes-feed.md), and a poll then is empty.
        var own = try fixture.app("GET", "/v1/changes?since=\(story.cursor)", token: story.friend.token)
        let deadline = Date().addingTimeInterval(30)
        while (own.object["changes"] as? [Any])?.isEmpty != false, Date() < deadline {
            usleep(50_000)
            own = try fixture.app("GET", "/v1/changes?since=\(story.cursor)", token: story.friend.token)
        }
        let view = try fixture.console("GET", "/users/\(story.friend.id)/changes?since=\(story.cursor)")
        #expect(view.status == 200)
        let object = view.object
        // Exactly what the device gets when it polls itself.
        #expect(object["status"] as? Int == 200)
        // The same answer but for the cursor: on an empty last page the cursor is the feed's
        // frontier, which other suites' commits on the shared cluster may move between the calls.
        var replayed = object["body"] as? [String: Any] ?? [:], direct = own.object
        if replayed["has_more"] as? Bool == false { replayed["cursor"] = nil; direct["cursor"] = nil }
        #expect(NSDictionary(dictionary: replayed) == NSDictionary(dictionary: direct))
        let changes = (object["body"] as? [String: Any])?["changes"] as? [[String: Any]] ?? []
        let revoked = Set(
            changes.filter { ($0["data"] as? [String: Any])?["revoked"] as? Bool == true }
                .map { "\($0["resource"] ?? "")/\(($0["data"] as? [String: Any])?["id"] ?? "")" })
        #expect(revoked == Set(["study_sets/\(story.set)"] + story.terms.map { "terms/\($0)" }))

        let explanation = try #require(object["explanation"] as? [String: Any])
        let notes = explanation["notes"] as? [[String: Any]] ?? []
        let revocation = try #require(notes.first { $0["kind"] as? String == "access_revoked" }?["text"] as? String)
        #expect(revocation.contains("Access to study_sets \(story.set) was revoked"), "\(revocation)")
        #expect(revocation.contains("1 study_sets") && revocation.contains("3 terms"), "\(revocation)")
        let summary = explanation["summary"] as? [[String: Any]] ?? []
        #expect(summary.first { $0["resource"] as? String == "terms" }?["revoked"] as? Int == 3)
        #expect(summary.first { $0["resource"] as? String == "set_collaborators" }?["tombstones"] as? Int == 1)
        #expect((explanation["cursor"] as? [String: Any])?["kind"] as? String == "frontier")

        // From the cursor that answer gave, the device is up to date.
        let next = try #require((object["body"] as? [String: Any])?["cursor"] as? String)
        let after = try fixture.console("GET", "/users/\(story.friend.id)/changes?since=\(next)").object
        let kinds = ((after["explanation"] as? [String: Any])?["notes"] as? [[String: Any]] ?? []).compactMap { $0["kind"] as? String }
        #expect(kinds.contains("up_to_date") && !kinds.contains("access_revoked"), "\(kinds)")

        // From the start the feed reads no revocation (the download holds only what the user
        // reads now): the explanation tells of none, though the user's access log has one.
        let start = try fixture.console("GET", "/users/\(story.friend.id)/changes?since=").object
        let startChanges = (start["body"] as? [String: Any])?["changes"] as? [[String: Any]] ?? []
        #expect(!startChanges.contains { ($0["data"] as? [String: Any])?["revoked"] as? Bool == true })
        let startKinds = ((start["explanation"] as? [String: Any])?["notes"] as? [[String: Any]] ?? []).compactMap { $0["kind"] as? String }
        #expect(!startKinds.contains("access_revoked"), "\(startKinds)")
    }

    @Test func whatAUserMayReadIsCountedAsTheUser() throws {
        let fixture = try ConsoleFixture()
        defer { fixture.stop() }
        let story = try fixture.revokedCollaborator()
        let other = try fixture.server.user("kim")
        _ = try fixture.app("POST", "/v1/study_sets", token: other.token, json: ["title": "private"])
        for user in [story.owner, story.friend, other] {
            let resources = try fixture.console("GET", "/users/\(user.id)").object["resources"] as? [[String: Any]] ?? []
            #expect(resources.count == 8)  // the study app's tables, its classes included
            for resource in resources {
                let name = resource["name"] as? String ?? ""
                let own = try fixture.app("GET", "/v1/\(name)?include_deleted=true&limit=1000", token: user.token).object
                let rows = own["data"] as? [[String: Any]] ?? []
                #expect(resource["readable"] as? Int == rows.filter { $0["is_deleted"] as? Bool != true }.count, "\(name)")
                #expect(resource["tombstones"] as? Int == rows.filter { $0["is_deleted"] as? Bool == true }.count, "\(name)")
            }
        }
    }

    @Test func aUsersRowsAreTheirOwnIndexAnswer() throws {
        let fixture = try ConsoleFixture()
        defer { fixture.stop() }
        let story = try fixture.revokedCollaborator()
        for query in ["", "?set_id=\(story.set)&order=word.desc", "?include_deleted=true&limit=2"] {
            for user in [story.owner, story.friend] {
                let view = try fixture.console("GET", "/users/\(user.id)/rows/terms\(query)").object
                let own = try fixture.app("GET", "/v1/terms\(query)", token: user.token)
                #expect(view["status"] as? Int == own.status)
                // Each first page makes its own snapshot: all but its token are the same.
                let strip = { (body: [String: Any]) -> NSDictionary in
                    var body = body
                    var paging = body["paging"] as? [String: Any] ?? [:]
                    paging["token"] = nil
                    paging["next"] = nil
                    body["paging"] = paging
                    return NSDictionary(dictionary: body)
                }
                #expect(strip(view["body"] as? [String: Any] ?? [:]) == strip(own.object), "\(query)")
            }
        }
        // Paged: the snapshot belongs to the user, and its later pages read as the user.
        let first = try fixture.console("GET", "/users/\(story.owner.id)/rows/terms?limit=2").object
        let token = try #require(((first["body"] as? [String: Any])?["paging"] as? [String: Any])?["token"] as? String)
        let second = try fixture.console("GET", "/users/\(story.owner.id)/rows/terms?limit=2&paging_token=\(token)&page=2").object
        #expect(((second["body"] as? [String: Any])?["data"] as? [Any])?.count == 1)
        let ownSecond = try fixture.app("GET", "/v1/terms?limit=2&paging_token=\(token)&page=2", token: story.owner.token)
        #expect(ownSecond.status == 200)
        let stranger = try fixture.console("GET", "/users/\(story.friend.id)/rows/terms?limit=2&paging_token=\(token)&page=2").object
        #expect(stranger["status"] as? Int == 404)
    }

    /// No route scoped to a user returns anything of another user's: their
    /// rows, names, token ids or refusals.
    @Test func noUserRouteShowsAnotherUsersData() throws {
        let fixture = try ConsoleFixture()
        defer { fixture.stop() }
        let alice = try fixture.server.user("alice")
        let bob = try fixture.server.user("bob")
        var secrets: [String: [String]] = [:]
        for (name, user) in [("alice", alice), ("bob", bob)] {
            let set =
                try fixture.app("POST", "/v1/study_sets", token: user.token, json: ["title": "\(name)-secret-title"]).object["id"] as? String ?? ""
            let term =
                try fixture.app("POST", "/v1/terms", token: user.token, json: ["set_id": set, "word": "\(name)-secret-word"]).object["id"] as? String
                ?? ""
            _ = try fixture.app("PATCH", "/v1/study_sets/\(set)", token: user.token, json: ["revision": 7, "title": "x"])
            _ = try fixture.sync(user.token, until: ["study_sets/\(set)", "terms/\(term)"])
            let tokens = try fixture.console("GET", "/users/\(user.id)").object["tokens"] as? [[String: Any]] ?? []
            secrets[name] = [set, term, "\(name)-secret-title", "\(name)-secret-word"] + tokens.compactMap { $0["id"] as? String }
        }
        _ = try fixture.waitForRefusals(alice.id, count: 1)
        _ = try fixture.waitForRefusals(bob.id, count: 1)
        for (name, user, other) in [("alice", alice, "bob"), ("bob", bob, "alice")] {
            let answers = try [
                "/users/\(user.id)", "/users/\(user.id)/changes", "/users/\(user.id)/rows/study_sets?include_deleted=true",
                "/users/\(user.id)/rows/terms", "/users?search=\(name)",
            ].map { try fixture.console("GET", $0).text }
            for answer in answers {
                for secret in secrets[other] ?? [] { #expect(!answer.contains(secret), "\(name)'s view shows \(other)'s \(secret)") }
            }
            // The user's own rows are there: the views are not empty by accident.
            #expect(answers[1].contains("\(name)-secret-word") && answers[2].contains(secrets[name]?[0] ?? "-"))
        }
    }

    /// A subscription seen as a user (issue 46): a public set's stream sends
    /// its rows, exactly as the user's own poll; a private set of someone
    /// else's is answered as a stream that does not exist, and shows nothing
    /// of it; without a stream, the default stream, which holds neither.
    @Test func aSubscriptionShowsWhatItWouldSend() throws {
        let fixture = try ConsoleFixture()
        defer { fixture.stop() }
        let owner = try fixture.server.user("olga")
        let reader = try fixture.server.user("kim")
        let open = try fixture.app("POST", "/v1/study_sets", token: owner.token, json: ["title": "Capitals", "is_public": true])
        let openSet = try #require(open.object["id"] as? String, "\(open.text)")
        let openTerms = try fixture.app(
            "POST", "/v1/terms", token: owner.token, json: ["Paris", "Rome"].map { ["set_id": openSet, "word": $0, "rank": "last"] })
        #expect(openTerms.status == 201, "\(openTerms.text)")
        let closedSet = try #require(
            try fixture.app("POST", "/v1/study_sets", token: owner.token, json: ["title": "closed-secret-title"]).object["id"] as? String)
        _ = try fixture.app("POST", "/v1/terms", token: owner.token, json: ["set_id": closedSet, "word": "closed-secret-word"])

        // The reader's own poll of the public stream, once the feed serves the set and its terms.
        var own: [String: Any] = [:]
        let served = eventually(within: 180, every: 0.05) {
            own = (try? fixture.app("GET", "/v1/changes?stream=set:\(openSet)", token: reader.token).object) ?? [:]
            return (own["changes"] as? [Any])?.count == 3
        }
        #expect(served, "the feed never served the public set: \(own)")
        let view = try fixture.console("GET", "/users/\(reader.id)/changes?stream=set:\(openSet)")
        #expect(view.status == 200, "\(view.text)")
        #expect(view.object["request"] as? String == "/v1/changes?stream=set%3A\(openSet)")
        #expect(view.object["status"] as? Int == 200)
        var replayed = view.object["body"] as? [String: Any] ?? [:]
        if replayed["has_more"] as? Bool == false, own["has_more"] as? Bool == false { replayed["cursor"] = nil; own["cursor"] = nil }
        #expect(NSDictionary(dictionary: replayed) == NSDictionary(dictionary: own))
        let explanation = try #require(view.object["explanation"] as? [String: Any])
        let counts = Dictionary(
            uniqueKeysWithValues: (explanation["summary"] as? [[String: Any]] ?? []).map {
                ($0["resource"] as? String ?? "", $0["rows"] as? Int ?? -1)
            })
        #expect(counts == ["study_sets": 1, "terms": 2], "\(counts)")
        let stream = try #require(explanation["stream"] as? [String: Any])
        #expect(stream["name"] as? String == "set" && stream["root"] as? String == "study_sets" && stream["id"] as? String == openSet)
        #expect(stream["root_readable"] as? Bool == true && stream["public"] as? Bool == true)
        let kinds = { (object: [String: Any]) in
            ((object["explanation"] as? [String: Any])?["notes"] as? [[String: Any]] ?? []).compactMap { $0["kind"] as? String }
        }
        #expect(kinds(view.object).contains("stream_readable") && kinds(view.object).contains("stream_public"), "\(kinds(view.object))")

        // Someone else's private set: what the feed answers for an id no row has, and nothing of it shown.
        let closed = try fixture.console("GET", "/users/\(reader.id)/changes?stream=set:\(closedSet)")
        let absent = try fixture.console("GET", "/users/\(reader.id)/changes?stream=set:\(UUID().uuidString.lowercased())")
        for answer in [closed, absent] {
            #expect(answer.status == 200 && answer.object["status"] as? Int == 200, "\(answer.text)")
            let body = answer.object["body"] as? [String: Any] ?? [:]
            #expect((body["changes"] as? [Any])?.isEmpty == true && body["has_more"] as? Bool == false && body["cursor"] is String)
            #expect(kinds(answer.object).contains("stream_absent") && !kinds(answer.object).contains("stream_readable"))
            #expect(((answer.object["explanation"] as? [String: Any])?["stream"] as? [String: Any])?["root_readable"] as? Bool == false)
            #expect(!answer.text.contains("closed-secret"))
        }
        let ownClosed = try fixture.app("GET", "/v1/changes?stream=set:\(closedSet)", token: reader.token).object
        #expect((ownClosed["changes"] as? [Any])?.isEmpty == true)

        // The default stream: the reader owns nothing and is no member, so neither set is in it;
        // the owner's holds both.
        let plain = try fixture.console("GET", "/users/\(reader.id)/changes").object
        #expect((plain["explanation"] as? [String: Any])?["stream"] is NSNull)
        #expect(((plain["body"] as? [String: Any])?["changes"] as? [Any])?.isEmpty == true, "\(plain)")
        _ = try fixture.sync(owner.token, until: ["study_sets/\(openSet)", "study_sets/\(closedSet)"])
        let owners = try fixture.console("GET", "/users/\(owner.id)/changes").text
        #expect(owners.contains(openSet) && owners.contains("closed-secret-word"))

        // The streams the operator picks from; an undeclared stream or an id of the wrong type is refused as the feed does.
        let streams = try fixture.console("GET", "/users/\(reader.id)").object["streams"] as? [[String: Any]] ?? []
        #expect(streams.map { $0["name"] as? String } == ["set"] && streams.first?["root"] as? String == "study_sets")
        for bad in ["nope:\(openSet)", "set:12", "set"] {
            let refused = try fixture.console("GET", "/users/\(reader.id)/changes?stream=\(bad)")
            #expect(refused.status == 400 && refused.object["code"] as? String == "invalid_query", "\(bad): \(refused.text)")
        }
    }

    /// The streams a user's devices wait on right now (issue 46): the server
    /// keeps no record of subscriptions, but a waiting device names its streams,
    /// and the user's page lists each open wait on this instance, with the
    /// streams it named only: here a second stream has the same root.
    @Test func aUsersOpenWaitsShowTheStreamsTheirDevicesFollow() throws {
        let database = try ScratchDatabase()
        let connection = try database.connect()
        _ = try connection.query("SELECT ferry.sync_stream('deck', scope => 'app.study_sets')")
        connection.close()
        let fixture = try ConsoleFixture(database: database) { $0.live.maxWaitSeconds = 3_600 }
        defer { fixture.stop() }
        let owner = try fixture.server.user("olga")
        let reader = try fixture.server.user("kim")
        let declared = try fixture.console("GET", "/users/\(reader.id)").object["streams"] as? [[String: Any]] ?? []
        #expect(Set(declared.map { "\($0["name"] ?? "") \($0["root"] ?? "")" }) == ["deck study_sets", "set study_sets"])
        let open = try fixture.app("POST", "/v1/study_sets", token: owner.token, json: ["title": "Rivers", "is_public": true])
        let set = try #require(open.object["id"] as? String, "\(open.text)")
        let now = { (query: String) in
            try #require(try fixture.app("GET", "/v1/changes?since=now\(query)", token: reader.token).object["cursor"] as? String)
        }
        let (own, stream) = (try now(""), try now("&stream=set:\(set)"))
        #expect(try fixture.console("GET", "/users/\(reader.id)").object["waiting"] as? [Any] != nil)
        // One device waits on its default stream and the set's; another long-polls the set's stream alone.
        let both = PendingRequest(
            port: fixture.server.port, "/v1/changes/wait", token: reader.token, headers: [("Content-Type", "application/json")],
            method: "POST", body: ChangesWaitTests.body(wait: 3_600, since: ["default": own, "set:\(set)": stream]))
        let one = PendingRequest(port: fixture.server.port, "/v1/changes?stream=set:\(set)&since=\(stream)&wait=3600", token: reader.token)
        try fixture.server.waitForWaiters(2)
        var waiting: [[String: Any]] = []
        let listed = eventually(within: 60, every: 0.05) {
            waiting = (try? fixture.console("GET", "/users/\(reader.id)").object["waiting"] as? [[String: Any]]) ?? []
            return waiting.count == 2
        }
        #expect(listed, "\(waiting)")
        let shown = Set(
            waiting.map { wait in
                "\(wait["route"] as? String ?? "-") \(wait["default_stream"] as? Bool ?? false) \(wait["streams"] as? [String] ?? [])"
            })
        #expect(shown == ["wait true [\"set:\(set)\"]", "changes false [\"set:\(set)\"]"], "\(waiting)")
        #expect(waiting.allSatisfy { $0["since"] is Int && $0["resources"] is NSNull })
        // Nobody else's: the owner has no open wait.
        #expect((try fixture.console("GET", "/users/\(owner.id)").object["waiting"] as? [Any])?.isEmpty == true)
        // A write to the set answers both; they leave the list.
        _ = try fixture.app("POST", "/v1/terms", token: owner.token, json: ["set_id": set, "word": "Nile", "rank": "last"])
        #expect(try both.response().status == 200 && one.response().status == 200)
        let emptied = eventually(within: 60, every: 0.05) {
            ((try? fixture.console("GET", "/users/\(reader.id)").object["waiting"] as? [Any]) ?? [1]).isEmpty
        }
        #expect(emptied)
    }

    @Test func anExpiredCursorAndASignedOutUserAreExplained() throws {
        let fixture = try ConsoleFixture()
        defer { fixture.stop() }
        let story = try fixture.revokedCollaborator()
        _ = try fixture.server.ownerQuery("UPDATE ferry.purge_horizon SET horizon_xid = pg_current_xact_id()")
        let expired = try fixture.console("GET", "/users/\(story.friend.id)/changes?since=\(story.cursor)").object
        #expect(expired["status"] as? Int == 410)
        #expect((expired["body"] as? [String: Any])?["code"] as? String == "cursor_expired")
        let kinds = { (object: [String: Any]) in
            ((object["explanation"] as? [String: Any])?["notes"] as? [[String: Any]] ?? []).compactMap { $0["kind"] as? String }
        }
        #expect(kinds(expired).contains("cursor_expired") && !kinds(expired).contains("cursor_ahead"))
        // A cursor past the database's next transaction (a restore to an older point) is told apart.
        let next = UInt64(try fixture.server.ownerQuery("SELECT pg_snapshot_xmax(pg_current_snapshot())::text").rows[0][0] ?? "0") ?? 0
        let ahead = try fixture.console("GET", "/users/\(story.friend.id)/changes?since=\(ChangeCursor(afterXID: next + 1_000_000).token)").object
        #expect(ahead["status"] as? Int == 410)
        #expect((ahead["body"] as? [String: Any])?["code"] as? String == "cursor_expired")
        #expect(kinds(ahead).contains("cursor_ahead") && !kinds(ahead).contains("cursor_expired"), "\(kinds(ahead))")
        // A cursor spelled as one, which the feed does not know, is what the device would be told;
        // one that is no cursor at all is the operator's mistake.
        let unknown = try fixture.console("GET", "/users/\(story.friend.id)/changes?since=1nope").object
        #expect(unknown["status"] as? Int == 400 && kinds(unknown).contains("invalid_cursor"))
        let garbage = try fixture.console("GET", "/users/\(story.friend.id)/changes?since=%25%25")
        #expect(garbage.status == 400 && garbage.object["code"] as? String == "invalid_query")
        #expect(try fixture.console("GET", "/users/\(story.friend.id)/changes?limit=0").status == 400)

        _ = try fixture.server.ownerQuery("UPDATE ferry.tokens SET revoked = true WHERE user_id = $1", [story.friend.id])
        let signedOut = try fixture.console("GET", "/users/\(story.friend.id)/changes").object
        #expect(kinds(signedOut).contains("signed_out"))
    }

    /// A transaction left open after it stamped (its first synced write, core
    /// 0032) holds the feed back; the console names it.
    @Test func theTransactionHoldingTheFrontierIsNamed() throws {
        let fixture = try ConsoleFixture()
        defer { fixture.stop() }
        let story = try fixture.revokedCollaborator()
        let holder = try PostgresConnection(url: fixture.server.database.ownerURL, applicationName: "stuck-job")
        defer { holder.close() }
        try holder.execute("BEGIN")
        let pid = try holder.query("SELECT pg_backend_pid(), ferry.stamp()").rows[0][0] ?? ""
        _ = try fixture.app("PATCH", "/v1/study_sets/\(story.set)", token: story.owner.token, json: ["revision": 1, "title": "later"])
        // Other tests' transactions share the cluster's xids, and one older than ours that
        // stamped may hold the feed for a moment (a migration of a test database): ask again
        // until ours is the oldest, which it stays while it runs.
        var view: [String: Any] = [:]
        var ours: [String: Any] = [:]
        var held = ""
        let named = eventually(within: 60, every: 0.1) {
            view = (try? fixture.console("GET", "/users/\(story.owner.id)/changes?since=now").object) ?? [:]
            let running = view["running_transactions"] as? [[String: Any]] ?? []
            ours = running.first { "\($0["pid"] ?? "")" == pid } ?? [:]
            let notes = (view["explanation"] as? [String: Any])?["notes"] as? [[String: Any]] ?? []
            held = notes.first { $0["kind"] as? String == "frontier_held" }?["text"] as? String ?? ""
            return !ours.isEmpty && held.contains("Transaction \(ours["xid"] ?? "-") ")
        }
        #expect(ours["application"] as? String == "stuck-job" && ours["this_database"] as? Bool == true, "\(view)")
        #expect((ours["age_ms"] as? Int ?? -1) >= 0)
        // The note names the one that holds the feed: ours, which has stamped (core 0032);
        // another database's never does (core 0023), nor one of this database that has not stamped.
        #expect(named, "\(held)")
        let health = try fixture.console("GET", "/health").object
        let shown = (health["feed"] as? [String: Any])?["running_transactions"] as? [[String: Any]] ?? []
        #expect(shown.contains { "\($0["pid"] ?? "")" == pid })
        try holder.execute("ROLLBACK")
    }
}
