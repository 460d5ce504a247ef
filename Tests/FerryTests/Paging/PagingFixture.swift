import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Testing

/// A signed-in client of one Ferry server, for paging tests.
struct Pager {
    let client: TestHTTPClient
    let token: String
    let userID: String

    init(server: TestServer, name: String) throws {
        let (id, token) = try server.user(name + "_" + UUID().uuidString.prefix(6).lowercased())
        self.init(client: server.client(), token: token, userID: id)
    }

    init(client: TestHTTPClient, token: String, userID: String) {
        self.client = client
        self.token = token
        self.userID = userID
    }

    /// The same user through another connection (another device, or another Ferry process).
    func on(_ client: TestHTTPClient) -> Pager { Pager(client: client, token: token, userID: userID) }

    @discardableResult
    func call(_ method: String, _ path: String, json: Any? = nil) throws -> TestHTTPClient.Response {
        try client.request(method, path, headers: [("Authorization", "Bearer \(token)")], json: json)
    }

    /// Creates a study set; returns its id.
    func createSet() throws -> String {
        let response = try call("POST", "/v1/study_sets", json: ["title": "Paging"])
        try #require(response.status == 201, "\(response.text)")
        return response.object["id"] as? String ?? ""
    }
}

/// Seeding straight into PostgreSQL as the owner, like a bulk import would.
enum PagingSeed {
    /// Inserts `count` terms into `set`, ranked `r0000001V`, `r0000002V`, … so the
    /// Index order is the insertion number; words are `w<n>`.
    static func terms(_ server: TestServer, set: String, count: Int) throws {
        _ = try server.ownerQuery(
            """
            INSERT INTO app.terms (set_id, word, definition, rank)
            SELECT $1::uuid, 'w' || i, 'd' || i, 'r' || lpad(i::text, 7, '0') || 'V' FROM generate_series(1, $2::int) i
            """, [set, String(count)])
    }

    /// The ids of `set`'s live terms in Index order.
    static func orderedIDs(_ server: TestServer, set: String) throws -> [String] {
        try server.ownerQuery(
            "SELECT id::text FROM app.terms WHERE set_id = $1::uuid AND NOT is_deleted ORDER BY rank, id", [set]
        ).rows.map { $0[0] ?? "" }
    }
}

extension TestHTTPClient.Response {
    /// The `paging` member.
    var paging: [String: Any] { object["paging"] as? [String: Any] ?? [:] }
    /// The `data` member.
    var rows: [[String: Any]] { object["data"] as? [[String: Any]] ?? [] }
    /// The problem code.
    var problemCode: String? { object["code"] as? String }
    /// `paging.next`, or nil.
    var nextLink: String? { paging["next"] as? String }
}
