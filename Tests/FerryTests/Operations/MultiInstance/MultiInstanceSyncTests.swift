import Foundation
import FerryPostgres
import FerryTestSupport
import Testing

/// Paging across instances of one loopback deployment: a snapshot stored by
/// one instance is read by the other.
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
        let session = try Session(deployment)
        let writer = session.nginx
        let set = UUID().uuidString.lowercased()
        #expect(try writer.request("POST", "/v1/study_sets", headers: [session.auth], json: ["id": set, "title": "walk"]).status == 201)
        let terms = (0..<120).map { ["set_id": set, "word": "w\($0)", "rank": "r" + String(format: "%05d", $0 * 10)] }
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
            let extra = try writer.request("POST", "/v1/terms", headers: [session.auth],
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
}
