import Ferry
import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Testing

/// The study example's public sets (examples/study/migrations/0019_public_sets.sql)
/// over the wire: any user browses them by title through Index and subscribes
/// to one (the stream `set`) to keep it offline; nothing of them reaches a
/// device that did not subscribe, and who collaborates on a set stays private,
/// also when the set stops being public.
@Suite struct StudyPublicSetsTests {
    /// A subscription from the start that names only resources outside its stream has
    /// nothing to probe: answered as an empty page, not a 500 (schemathesis found it when
    /// the probe stopped reading the access logs from the start, and held no probe at all).
    @Test func aStreamFromTheStartOfResourcesOutsideItIsAnEmptyPage() throws {
        let server = try TestServer()
        defer { server.stop() }
        let user = try server.user("vera")
        let zeros = String(repeating: "0", count: 32)
        for wait in ["&wait=0", "&wait=1", ""] {
            let path = "/v1/changes?since=&limit=500&resources=class_members\(wait)&stream=set%3A\(zeros)"
            let page = try server.client().request("GET", path, headers: [("Authorization", "Bearer \(user.token)"), ("Last-Event-ID", "")])
            #expect(page.status == 200, "\(path): \(page.text)")
            #expect((page.object["changes"] as? [Any])?.isEmpty == true, "\(path): \(page.text)")
        }
    }

    @Test func anyUserBrowsesPublicSetsByTitleAndSubscribesToOne() throws {
        let database = try ScratchDatabase.create(prefix: "ferry_study_public")
        try database.applyMigrations()
        let owner = try database.connect()
        defer { owner.close() }
        var auth: [String: [(String, String)]] = [:]
        var ids: [String: String] = [:]
        for name in ["teacher", "student", "helper"] {
            ids[name] = try owner.query("SELECT ferry.create_user($1, $1 || '-password-1')::text", [name]).first?[0] ?? ""
            let token = try #require(try AuthService.issueToken(name: name, ttlSeconds: 600, connection: owner)).token
            auth[name] = [("Authorization", "Bearer \(token)")]
        }
        let server = try TestServer(database: database)
        defer { server.stop() }
        let client = server.client()
        func post(_ path: String, _ body: [String: Any], as user: String = "teacher") throws -> String {
            let made = try client.request("POST", path, headers: auth[user]!, json: body)
            try #require(made.status == 201, "\(path): \(made.text)")
            return try #require(made.object["id"] as? String)
        }
        // Two public sets, one private; a term each; a collaborator on a public one.
        let verbs = try post("/v1/study_sets", ["title": "Verbs", "is_public": true])
        let animals = try post("/v1/study_sets", ["title": "Animals", "is_public": true])
        let draft = try post("/v1/study_sets", ["title": "Draft"])
        var terms: [String: String] = [:]
        for set in [verbs, animals, draft] { terms[set] = try post("/v1/terms", ["set_id": set, "word": "w"]) }
        let collaborator = try post("/v1/set_collaborators", ["set_id": verbs, "user_id": ids["helper"]!])

        // Browsing: the public sets by title, whoever asks; the private one is not there.
        let browse = try client.request("GET", "/v1/study_sets?is_public=true&order=title", headers: auth["student"]!)
        #expect(browse.status == 200, "\(browse.text.prefix(300))")
        let titles = (browse.object["data"] as? [[String: Any]] ?? []).map { $0["title"] as? String ?? "" }
        #expect(titles == ["Animals", "Verbs"], "\(titles)")
        let byTitle = try client.request("GET", "/v1/study_sets?title=Verbs", headers: auth["student"]!)
        #expect((byTitle.object["data"] as? [[String: Any]])?.map { $0["id"] as? String } == [verbs])
        #expect(try client.request("GET", "/v1/study_sets/\(draft)", headers: auth["student"]!).status == 404)
        // `public=false`: only what the student reads privately (nothing), as the default stream holds it.
        let privately = try client.request("GET", "/v1/study_sets?public=false", headers: auth["student"]!)
        #expect((privately.object["data"] as? [Any])?.isEmpty == true, "\(privately.text.prefix(300))")
        // Who collaborates stays private to the set's members.
        let members = try client.request("GET", "/v1/set_collaborators?set_id=\(verbs)", headers: auth["student"]!)
        #expect((members.object["data"] as? [Any])?.isEmpty == true, "\(members.text.prefix(300))")
        // Reading is not writing.
        let edit = try client.request("PATCH", "/v1/study_sets/\(verbs)", headers: auth["student"]!, json: ["title": "mine"])
        #expect(edit.status >= 400, "\(edit.text)")

        // Subscribed to Verbs: the set and its term, not its collaborator row; the default stream brings nothing.
        var seen: Set<String> = []
        var cursor: String?
        let deadline = ContinuousClock.now + .seconds(30)
        while seen.count < 2, ContinuousClock.now < deadline {
            let page = try client.request(
                "GET", "/v1/changes?stream=set:\(verbs)" + (cursor.map { "&since=\($0)" } ?? ""), headers: auth["student"]!)
            try #require(page.status == 200, "\(page.text.prefix(300))")
            for change in page.object["changes"] as? [[String: Any]] ?? [] {
                seen.insert((change["data"] as? [String: Any])?["id"] as? String ?? "")
            }
            cursor = page.object["cursor"] as? String
            if seen.count < 2 { usleep(20_000) }
        }
        #expect(seen == [verbs, terms[verbs]!], "\(seen)")
        #expect(!seen.contains(collaborator))
        let feed = try client.request("GET", "/v1/changes", headers: auth["student"]!)
        #expect((feed.object["changes"] as? [Any])?.isEmpty == true, "\(feed.text.prefix(300))")

        // Verbs made private: the subscriber's stream revokes the set and its
        // term, and never names the collaborator row it did not send (issue 46).
        let current = try client.request("GET", "/v1/study_sets/\(verbs)", headers: auth["teacher"]!)
        let revision = try #require(current.object["revision"] as? Int)
        let hidden = try client.request(
            "PATCH", "/v1/study_sets/\(verbs)", headers: auth["teacher"]! + [("If-Match", "\"\(revision)\"")], json: ["is_public": false])
        try #require(hidden.status == 200, "\(hidden.text)")
        var revoked: Set<String> = []
        try waitUntil("the stream to revoke the set and its term", within: 30) {
            let page = try client.request("GET", "/v1/changes?stream=set:\(verbs)&since=\(cursor ?? "")", headers: auth["student"]!)
            for change in page.object["changes"] as? [[String: Any]] ?? [] {
                guard let data = change["data"] as? [String: Any], data["revoked"] as? Bool == true else { continue }
                revoked.insert(data["id"] as? String ?? "")
            }
            cursor = page.object["cursor"] as? String ?? cursor
            return revoked.isSuperset(of: [verbs, terms[verbs]!]) && page.object["has_more"] as? Bool == false
        }
        #expect(!revoked.contains(collaborator), "\(revoked.sorted())")
    }
}
