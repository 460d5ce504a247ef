import Ferry
import FerryHTTPTestSupport
import FerryTestSupport
import Foundation

/// A client that follows `/v1/changes` cursor by cursor and keeps what it
/// learned, applying rows by revision the way a real client would.
final class FeedFollower {
    let client: TestHTTPClient
    let token: String
    var cursor: String?
    /// "resource/id" to the latest row (revoked rows removed).
    var rows: [String: [String: Any]] = [:]
    /// "resource/id" of every revoked entry received.
    var revoked: Set<String> = []
    var polls = 0
    /// How many entries each `resource/id` came in, repeats included.
    var deliveries: [String: Int] = [:]
    /// Whether a 410 `cursor_expired` restarts a full sync, as the contract
    /// tells clients to. Off by default so that tests notice unexpected expiry.
    var restartWhenExpired = false

    init(server: TestServer, token: String) {
        client = server.client()
        self.token = token
    }

    struct Failure: Error, CustomStringConvertible { let description: String }

    /// One poll; applies the changes and advances the cursor. Returns (response, has_more).
    @discardableResult
    func poll(limit: Int? = nil, resources: String? = nil) throws -> (TestHTTPClient.Response, Bool) {
        var query: [String] = []
        if let cursor { query.append("since=\(cursor)") }
        if let limit { query.append("limit=\(limit)") }
        if let resources { query.append("resources=\(resources)") }
        let path = "/v1/changes" + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
        // Like a real client, retry what the contract calls temporary (503 when
        // the pool is exhausted on a loaded machine); a 503 left is refused below.
        var last: TestHTTPClient.Response?
        _ = try eventually(within: 10, every: 0.2) {
            last = try client.request("GET", path, headers: [("Authorization", "Bearer \(token)")])
            return last?.status != 503
        }
        guard let response = last else { throw Failure(description: "GET \(path) was never answered") }
        polls += 1
        if response.status == 410, restartWhenExpired, cursor != nil {
            // The cluster-wide frontier can sit below a fresh purge horizon while another
            // session's write transaction is open; the client starts over, as told.
            cursor = nil
            rows = [:]
            return try poll(limit: limit, resources: resources)
        }
        guard response.status == 200 else {
            throw Failure(description: "GET \(path) answered \(response.status): \(response.text)")
        }
        let body = response.object
        guard let changes = body["changes"] as? [[String: Any]], let next = body["cursor"] as? String,
            let hasMore = body["has_more"] as? Bool
        else {
            throw Failure(description: "malformed feed answer: \(response.text.prefix(300))")
        }
        guard response.header("ETag") == "\"\(next)\"" else { throw Failure(description: "ETag is not the cursor") }
        for change in changes { apply(change) }
        cursor = next
        return (response, hasMore)
    }

    func apply(_ change: [String: Any]) {
        guard let resource = change["resource"] as? String, let data = change["data"] as? [String: Any] else { return }
        let key = resource + "/" + "\(data["id"] ?? "")"
        deliveries[key, default: 0] += 1
        if data["revoked"] as? Bool == true {
            rows[key] = nil
            revoked.insert(key)
            return
        }
        if let old = rows[key], (old["revision"] as? Int ?? 0) > (data["revision"] as? Int ?? 0) { return }
        rows[key] = data
    }

    /// The decoded cursor.
    var position: ChangeCursor? { cursor.flatMap(ChangeCursor.init(token:)) }

    /// Polls until a page ends with nothing more and the frontier has passed
    /// `xid` (everything that transaction wrote is then delivered).
    func catchUp(pastXID xid: UInt64, limit: Int? = nil, timeout: Double = 90) throws {
        try waitUntil("the feed to pass xid \(xid)", within: timeout) {
            // Every page there is now, then the frontier: it moves as other transactions end.
            while try poll(limit: limit).1 {}
            guard let p = position else { return false }
            return p.position == nil && p.afterXID >= xid
        }
    }

    /// The rows of one resource, by id.
    func rows(of resource: String) -> [String: [String: Any]] {
        var out: [String: [String: Any]] = [:]
        for (key, row) in rows where key.hasPrefix(resource + "/") { out[String(key.dropFirst(resource.count + 1))] = row }
        return out
    }
}

extension TestServer {
    /// The highest `_ferry_xid` in the database's synced tables and access logs.
    func maxXID() throws -> UInt64 {
        let sql = """
            SELECT greatest((SELECT max(_ferry_xid) FROM app.terms), (SELECT max(_ferry_xid) FROM app.study_sets),
                            (SELECT max(_ferry_xid) FROM app.set_collaborators),
                            (SELECT max(xid) FROM ferry.access_grants), (SELECT max(xid) FROM ferry.access_revocations))::text
            """
        return UInt64(try ownerQuery(sql).rows[0][0] ?? "0") ?? 0
    }

    /// Makes rows look `days` older, as if deleted long ago (the update
    /// trigger, which keeps last_modified monotonic, is off meanwhile).
    func backdate(_ table: String, ids: [String], days: Int) throws {
        _ = try ownerQuery("ALTER TABLE app.\(table) DISABLE TRIGGER zz_ferry_sync_update")
        defer { _ = try? ownerQuery("ALTER TABLE app.\(table) ENABLE TRIGGER zz_ferry_sync_update") }
        _ = try ownerQuery(
            "UPDATE app.\(table) SET last_modified = last_modified - $2::bigint * 86400000 WHERE id = ANY($1::uuid[])",
            ["{" + ids.joined(separator: ",") + "}", String(days)])
    }

    /// Creates a set for `userID` as that user would; returns its id.
    func makeSet(for userID: String, title: String = "set") throws -> String {
        try ownerQuery("INSERT INTO app.study_sets (creator_id, title) VALUES ($1, $2) RETURNING id", [userID, title])
            .rows[0][0] ?? ""
    }

    /// Adds `count` terms to a set; returns their ids.
    func makeTerms(in setID: String, count: Int) throws -> [String] {
        try ownerQuery(
            """
            INSERT INTO app.terms (set_id, word, definition) SELECT $1, 'w' || i, 'd' || i FROM generate_series(1, $2) i
            RETURNING id
            """, [setID, String(count)]
        ).rows.compactMap { $0[0] }
    }
}
