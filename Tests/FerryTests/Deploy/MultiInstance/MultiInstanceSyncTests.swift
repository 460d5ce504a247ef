import FerryHTTPTestSupport
import Foundation
import FerryPostgres
import FerryTestSupport
import Testing

/// Paging and the changes feed across instances of one loopback deployment: a
/// snapshot stored by one instance is read by the other, and the feed is the
/// same whichever instance answers.
@Suite(.serialized) struct MultiInstanceSyncTests {
    private struct Session {
        let deployment: LoopbackDeployment
        let auth: (String, String)

        init(_ deployment: LoopbackDeployment) throws {
            self.deployment = deployment
            let owner = try PostgresConnection(url: deployment.database.ownerURL)
            defer { owner.close() }
            _ = try owner.query("SELECT ferry.create_user($1, $2)", ["syncer", "syncer-password"])
            let basic = "Basic " + Data("syncer:syncer-password".utf8).base64EncodedString()
            let signIn = try TestHTTPClient(port: deployment.nginxPort)
                .request("POST", "/v1/auth/token", headers: [("Authorization", basic)])
            guard let token = signIn.object["token"] as? String else {
                throw ServiceProcess.Failure(description: "sign-in: \(signIn.status) \(signIn.text)")
            }
            auth = ("Authorization", "Bearer \(token)")
        }

        /// A client of instance `index` directly, bypassing nginx.
        func instance(_ index: Int) -> TestHTTPClient { TestHTTPClient(port: deployment.ferryPorts[index]) }
        var nginx: TestHTTPClient { TestHTTPClient(port: deployment.nginxPort) }
    }

    private func ids(_ rows: Any?) -> [String] {
        (rows as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
    }

    @Test func pagingWalkAlternatesBetweenInstances() throws {
        let deployment = try LoopbackDeployment()
        defer { deployment.stop() }
        // A thrown transport error says nothing of the processes behind it.
        do { try walk(deployment) } catch { Issue.record("\(error)\n\(deployment.logs)") }
    }

    private func walk(_ deployment: LoopbackDeployment) throws {
        let session = try Session(deployment)
        let writer = session.nginx
        let set = UUID().uuidString.lowercased()
        #expect(try writer.request("POST", "/v1/study_sets", headers: [session.auth], json: ["id": set, "title": "walk"]).status == 201)
        let terms = (0..<120).map { ["set_id": set, "word": "w\($0)", "rank": "r" + String(format: "%05d", $0 * 10 + 1)] }
        let created = try writer.request("POST", "/v1/terms", headers: [session.auth], json: terms)
        try #require(created.status == 201, "\(created.status) \(created.text)\n\(deployment.logs)")

        let clients = [session.instance(0), session.instance(1)]
        var page = try clients[0].request("GET", "/v1/terms?set_id=\(set)&limit=25", headers: [session.auth])
        try #require(page.status == 200, "\(page.text)")
        var paging = page.object["paging"] as? [String: Any] ?? [:]
        let token = try #require(paging["token"] as? String, "a 120-row result needs a snapshot")
        #expect(paging["pages"] as? Int == 5)
        var seen = ids(page.object["data"])
        var inserted: [String] = []
        var number = 1
        while let next = paging["next"] as? String {
            // Someone else writes between the pages: a new row that sorts first.
            let extra = try writer.request(
                "POST", "/v1/terms", headers: [session.auth],
                json: ["set_id": set, "word": "late \(number)", "rank": "a"])
            #expect(extra.status == 201, "\(extra.status) \(extra.text)")
            if let id = extra.object["id"] as? String { inserted.append(id) }
            // Page N+1 from the instance that did NOT store the snapshot, then back.
            page = try clients[number % 2].request("GET", next, headers: [session.auth])
            try #require(page.status == 200, "page \(number + 1) via instance \(number % 2): \(page.text)")
            paging = page.object["paging"] as? [String: Any] ?? [:]
            #expect(paging["token"] as? String == token)
            seen += ids(page.object["data"])
            number += 1
        }
        #expect(number == 5)
        #expect(seen.count == 120 && Set(seen).count == 120, "every row of the snapshot exactly once")
        #expect(inserted.count == 4)
        #expect(Set(seen).isDisjoint(with: inserted), "rows created after the snapshot wait for the next sync")
    }

    /// Follows the feed from `since` until `has_more` is false; returns the ids and the last cursor.
    private func follow(_ client: TestHTTPClient, _ auth: (String, String), since: String?) throws -> (Set<String>, String) {
        var cursor = since
        var seen: Set<String> = []
        while true {
            let query = cursor.map { "?since=\($0)&limit=50" } ?? "?limit=50"
            let response = try client.request("GET", "/v1/changes" + query, headers: [auth])
            try #require(response.status == 200, "\(response.status) \(response.text)")
            for change in response.object["changes"] as? [[String: Any]] ?? [] {
                if let id = (change["data"] as? [String: Any])?["id"] as? String { seen.insert(id) }
            }
            cursor = try #require(response.object["cursor"] as? String)
            if response.object["has_more"] as? Bool != true { return (seen, cursor!) }
        }
    }

    private func followUntil(
        _ expected: Set<String>, _ client: TestHTTPClient, _ auth: (String, String), since: String?, timeout: Double = 90
    ) throws -> (Set<String>, String) {
        var seen: Set<String> = []
        var cursor = since
        _ = try eventually(within: timeout, every: 0.05) {
            let (more, next) = try follow(client, auth, since: cursor)
            seen.formUnion(more)
            cursor = next
            return seen.isSuperset(of: expected)
        }
        return (seen, cursor ?? "")
    }

    @Test
    func changesFeedIsTheSameThroughEitherInstance() throws {
        let deployment = try LoopbackDeployment()
        defer { deployment.stop() }
        let session = try Session(deployment)
        let a = session.instance(0), b = session.instance(1)
        let (_, start) = try follow(a, session.auth, since: nil)
        // Writes land on both instances through nginx.
        let writer = session.nginx
        var written: Set<String> = []
        for index in 0..<30 {
            let id = UUID().uuidString.lowercased()
            let response = try writer.request("POST", "/v1/study_sets", headers: [session.auth], json: ["id": id, "title": "s\(index)"])
            try #require(response.status == 201, "\(response.text)")
            written.insert(id)
        }
        // The feed serves only below the cluster's oldest running writer, and other
        // tests share this PostgreSQL: follow until the writes are visible (or time out).
        let (throughA, endA) = try followUntil(written, a, session.auth, since: start)
        let (throughB, endB) = try followUntil(written, b, session.auth, since: start)
        #expect(throughA.isSuperset(of: written), "instance 0 missed \(written.subtracting(throughA).count) changes")
        #expect(throughB.isSuperset(of: written), "instance 1 missed \(written.subtracting(throughB).count) changes")
        #expect(throughA == throughB)
        // A cursor from one instance is good on the other: nothing new, 304.
        for (client, cursor) in [(b, endA), (a, endB)] {
            let quiet = try client.request("GET", "/v1/changes?since=\(cursor)", headers: [session.auth, ("If-None-Match", "\"\(cursor)\"")])
            #expect(quiet.status == 304)
        }
    }
}
