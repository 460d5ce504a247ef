import Ferry
import FerryHTTPTestSupport
import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

/// A Ferry server with two operators (an admin and a viewer) and helpers to
/// call the console's API and the app's as users.
struct ConsoleFixture {
    let server: TestServer
    let admin: String
    let viewer: String

    /// On `database` when given (a scratch database a test prepared), else a new one.
    init(database: ScratchDatabase? = nil, _ configure: (inout FerryConfiguration) -> Void = { _ in }) throws {
        server = try TestServer(database: database, configure)
        admin = try Self.operatorToken(server, name: "dana", role: "admin")
        viewer = try Self.operatorToken(server, name: "vic", role: "viewer")
    }

    func stop() { server.stop() }

    /// Creates an operator (password `<name>-password`) and returns a console token for it.
    static func operatorToken(_ server: TestServer, name: String, role: String) throws -> String {
        let connection = try PostgresConnection(url: server.database.ownerURL)
        defer { connection.close() }
        _ = try OperatorAccounts.create(name: name, password: "\(name)-password", role: role, connection: connection)
        return try #require(try OperatorAccounts.issueToken(name: name, ttlSeconds: 3600, connection: connection)).token
    }

    /// A console API call (`path` under /console/api) with `token`.
    @discardableResult
    func console(_ method: String = "GET", _ path: String, token: String? = nil, json: Any? = nil) throws -> TestHTTPClient.Response {
        try server.client().request(method, "/console/api" + path, headers: [("Authorization", "Bearer \(token ?? admin)")], json: json)
    }

    /// An app API call as a user.
    @discardableResult
    func app(_ method: String = "GET", _ path: String, token: String, json: Any? = nil) throws -> TestHTTPClient.Response {
        try server.client().request(method, path, headers: [("Authorization", "Bearer \(token)")], json: json)
    }

    /// The collaborator story: gina shares a set of three terms with hank, whose
    /// device syncs; gina removes him. Returns the ids and the cursor hank's
    /// device held before the removal.
    func revokedCollaborator() throws -> RevokedCollaborator {
        let owner = try server.user("gina")
        let friend = try server.user("hank")
        let set = try app("POST", "/v1/study_sets", token: owner.token, json: ["title": "Spanish verbs"]).object["id"] as? String ?? ""
        let terms = try app(
            "POST", "/v1/terms", token: owner.token, json: ["ser", "estar", "ir"].map { ["set_id": set, "word": $0, "rank": "last"] })
        let termIDs = (terms.json as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        let collaborator = try app("POST", "/v1/set_collaborators", token: owner.token, json: ["set_id": set, "user_id": friend.id])
        let collaboratorID = collaborator.object["id"] as? String ?? ""
        // Hank's device syncs until it has the set and its terms (the feed serves them once
        // every older transaction of the cluster has ended), and keeps the cursor.
        let cursor = try sync(friend.token, until: Set(["study_sets/\(set)"] + termIDs.map { "terms/\($0)" }))
        _ = try app("DELETE", "/v1/set_collaborators/\(collaboratorID)?revision=1", token: owner.token)
        // The feed serves the revocation once every older transaction of the cluster has
        // ended: wait for that, without moving the device's cursor.
        let served = eventually(within: 180, every: 0.05) {
            let page = (try? app("GET", "/v1/changes?since=\(cursor)", token: friend.token).object) ?? [:]
            return (page["changes"] as? [[String: Any]] ?? []).contains { ($0["data"] as? [String: Any])?["revoked"] as? Bool == true }
        }
        #expect(served, "the feed never served the revocation")
        return RevokedCollaborator(owner: owner, friend: friend, set: set, terms: termIDs, collaborator: collaboratorID, cursor: cursor)
    }

    /// Follows the feed as `token`'s device would until it has received every
    /// `resource/id` of `wanted`; returns the cursor it then holds.
    func sync(_ token: String, until wanted: Set<String>) throws -> String {
        var cursor = ""
        var received: Set<String> = []
        let deadline = Date().addingTimeInterval(180)
        while Date() < deadline {
            let page = try app("GET", "/v1/changes" + (cursor.isEmpty ? "" : "?since=\(cursor)"), token: token).object
            cursor = page["cursor"] as? String ?? cursor
            for change in page["changes"] as? [[String: Any]] ?? [] {
                received.insert("\(change["resource"] ?? "")/\((change["data"] as? [String: Any])?["id"] ?? "")")
            }
            if page["has_more"] as? Bool == true { continue }
            if wanted.isSubset(of: received) { return cursor }
            Thread.sleep(forTimeInterval: 0.02)
        }
        throw TestEnvironment.Missing(description: "the feed never served \(wanted.subtracting(received))")
    }

    struct RevokedCollaborator {
        let owner: (id: String, token: String)
        let friend: (id: String, token: String)
        let set: String
        let terms: [String]
        let collaborator: String
        let cursor: String
    }

    /// Waits until the refusal recorder has written `count` refusals for `userID`.
    func waitForRefusals(_ userID: String, count: Int) throws -> [[String: Any]] {
        var refusals: [[String: Any]] = []
        let done = eventually(within: 180, every: 0.05) {
            refusals = (try? console("GET", "/users/\(userID)").object["refusals"] as? [[String: Any]]) ?? []
            return refusals.count >= count
        }
        #expect(done, "\(refusals.count) of \(count) refusals recorded")
        return refusals
    }
}
