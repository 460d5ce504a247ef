import Ferry
import FerryHTTPTestSupport
import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

/// The shared cache in front of the changes feed (deploy/nginx/ferry.conf,
/// API.md "Caching"), on loopback: nginx with its cache before two `ferry
/// serve`s, an app with public sets and a `set` stream. A public stream's
/// page is computed once by Ferry and answered to many devices; a private page
/// is never kept; nobody reads a kept page without a valid bearer; a change
/// reaches later devices once the page's max-age has passed.
@Suite(.serialized) struct SharedCacheTests {
    /// Seconds a kept public page is answered (live.public_page_max_age_seconds).
    static let maxAge = 2

    struct Devices {
        let deployment: LoopbackDeployment
        let client: TestHTTPClient
        let alice: [(String, String)]
        /// Users with no access of their own: each a device of its own.
        let readers: [[(String, String)]]

        func get(_ path: String, _ auth: [(String, String)]) throws -> TestHTTPClient.Response {
            try client.request("GET", path, headers: auth)
        }

        /// GET /v1/changes answers Ferry's instances gave, all statuses together.
        func changesServed() throws -> Double {
            var total = 0.0
            for port in deployment.ferryPorts {
                let samples = try PrometheusSamples(try TestHTTPClient(port: port).request("GET", "/metrics").text)
                for status in ["200", "304"] {
                    total += samples.value("ferry_http_requests_total", ["route": "/v1/changes", "status": status]) ?? 0
                }
            }
            return total
        }

        /// The ids of a page's rows.
        static func ids(_ response: TestHTTPClient.Response) -> Set<String> {
            Set((response.object["changes"] as? [[String: Any]] ?? []).compactMap { ($0["data"] as? [String: Any])?["id"] as? String })
        }
    }

    static func devices(readers: Int) throws -> Devices {
        let deployment = try LoopbackDeployment(
            appFiles: SyncStreamTests.app, settings: ["FERRY_LIVE_PUBLIC_PAGE_MAX_AGE_SECONDS": String(maxAge)])
        do {
            let owner = try PostgresConnection(url: deployment.database.ownerURL)
            defer { owner.close() }
            var tokens: [String] = []
            for index in 0...readers {
                let name = index == 0 ? "alice" : "reader\(index)"
                _ = try owner.query("SELECT ferry.create_user($1, $1 || '-password-1')", [name])
                tokens.append(try #require(try AuthService.issueToken(name: name, ttlSeconds: 600, connection: owner)).token)
            }
            let auth = tokens.map { [("Authorization", "Bearer \($0)")] }
            return Devices(
                deployment: deployment, client: TestHTTPClient(port: deployment.nginxPort, timeout: 30), alice: auth[0],
                readers: Array(auth.dropFirst()))
        } catch {
            deployment.stop()
            throw error
        }
    }

    /// Alice's set with `terms` terms, made through nginx; its id and its rows' ids.
    static func set(_ d: Devices, public isPublic: Bool, terms: Int) throws -> (id: String, rows: Set<String>) {
        let made = try d.client.request("POST", "/v1/sets", headers: d.alice, json: ["title": "set", "is_public": isPublic])
        try #require(made.status == 201, "\(made.status) \(made.text)\n\(d.deployment.logs)")
        let id = try #require(made.object["id"] as? String)
        var rows: Set<String> = [id]
        for n in 0..<terms { rows.insert(try addTerm(d, to: id, word: "w\(n)")) }
        return (id, rows)
    }

    static func addTerm(_ d: Devices, to set: String, word: String) throws -> String {
        let term = try d.client.request("POST", "/v1/terms", headers: d.alice, json: ["set_id": set, "word": word])
        try #require(term.status == 201, "\(term.text)")
        return try #require(term.object["id"] as? String)
    }

    /// Waits until every instance, asked directly, answers `path` with `rows`.
    static func waitForRows(_ d: Devices, path: String, auth: [(String, String)], rows: Set<String>) throws {
        for port in d.deployment.ferryPorts {
            let direct = TestHTTPClient(port: port)
            try waitUntil("\(path) complete on the instance at port \(port)", within: 30) {
                Devices.ids(try direct.request("GET", path, headers: auth)) == rows
            }
        }
    }

    @Test func aPublicPageIsComputedOnceForManyDevicesAndAPrivatePageNeverKept() throws {
        let d = try Self.devices(readers: 6)
        defer { d.deployment.stop() }
        let open = try Self.set(d, public: true, terms: 3)
        let closed = try Self.set(d, public: false, terms: 2)

        // The set's rows reach the feed once each instance's frontier passes
        // their commits: asked of every instance itself, past nginx, until
        // they are all there. (nginx may send a round to either instance; one
        // still behind would answer an empty page, and the cache would keep it.)
        try Self.waitForRows(d, path: "/v1/changes?limit=100&stream=set:\(open.id)", auth: d.readers[0], rows: open.rows)

        // (a) Many devices, one page: the first asks Ferry, the others get its
        // answer from the cache. A round slower than the max-age (a loaded
        // machine) lets the page expire; then a new URI, a new round.
        var shared = false
        var rounds: [String] = []
        for round in 0..<10 where !shared {
            let path = "/v1/changes?limit=\(100 + round)&stream=set:\(open.id)"
            let before = try d.changesServed()
            let answers = try d.readers.map { try d.get(path, $0) }
            let statuses = answers.map { $0.header("X-Cache-Status") ?? "none" }
            // An instance may count an answer a moment after sending it.
            let misses = Double(statuses.filter { $0 != "HIT" }.count)
            _ = try eventually(within: 5) { try d.changesServed() - before >= misses }
            let after = try d.changesServed()
            rounds.append("\(statuses) Ferry served \(after - before)")
            for answer in answers {
                #expect(answer.status == 200, "\(answer.text)")
                #expect(answer.header("Cache-Control") == "public, max-age=\(Self.maxAge)")
                #expect(answer.header("ETag")?.hasPrefix("\"s") == true)
                #expect(Devices.ids(answer) == open.rows, "every device gets the public set: \(answer.text)")
            }
            // Every answer that was not a hit was one Ferry served, and no other.
            #expect(misses == after - before, "\(rounds)")
            if statuses.first == "MISS", statuses.dropFirst().allSatisfy({ $0 == "HIT" }) {
                shared = true
                #expect(after - before == 1, "computed once: \(rounds)")
                #expect(Set(answers.map(\.body)).count == 1, "one body for every device")
                // Each answer has its own request id, not the one that filled the cache.
                #expect(Set(answers.compactMap { $0.header("X-Request-Id") }).count == answers.count)
            }
        }
        #expect(shared, "no round had one miss and hits after it: \(rounds)")

        // (c) A kept page is never answered without a valid bearer.
        let cachedPath = "/v1/changes?limit=200&stream=set:\(open.id)"
        let filled = try d.get(cachedPath, d.readers[0])
        #expect(filled.status == 200 && filled.header("X-Cache-Status") == "MISS")
        for auth in [[], [("Authorization", "Bearer not-a-token")], [("Authorization", "Basic YWxpY2U6eA==")]] {
            let refused = try d.get(cachedPath, auth)
            #expect(refused.status == 401, "\(auth): \(refused.status) \(refused.text)")
            #expect(refused.header("X-Cache-Status") != "HIT")
            #expect(refused.object["code"] as? String == "unauthorized", "Ferry's own problem: \(refused.text)")
            #expect(refused.header("WWW-Authenticate")?.hasPrefix("Bearer") == true)
            #expect(Devices.ids(refused).isEmpty)
        }
        // The page was still kept all along: a signed-in device gets it from the cache.
        let again = try d.get(cachedPath, d.readers[1])
        #expect(again.status == 200 && Devices.ids(again) == open.rows)

        // (b) Private pages are never kept: the default stream goes past the
        // cache; a private set's stream reaches Ferry for every device, and
        // each gets its own answer.
        for _ in 0..<2 {
            let mine = try d.get("/v1/changes?limit=100", d.alice)
            #expect(mine.header("X-Cache-Status") == "BYPASS")
            #expect(mine.header("Cache-Control") == "private, no-store")
            let theirs = try d.get("/v1/changes?limit=100", d.readers[0])
            #expect(theirs.header("X-Cache-Status") == "BYPASS")
            #expect(Devices.ids(theirs).isEmpty, "a reader's default stream holds none of alice's rows: \(theirs.text)")
        }
        try Self.waitForRows(d, path: "/v1/changes?limit=100&stream=set:\(closed.id)", auth: d.alice, rows: closed.rows)
        let privatePath = "/v1/changes?limit=100&stream=set:\(closed.id)"
        for _ in 0..<2 {
            let owner = try d.get(privatePath, d.alice)
            #expect(owner.status == 200 && Devices.ids(owner) == closed.rows)
            #expect(owner.header("Cache-Control") == "private, no-store")
            #expect(owner.header("X-Cache-Status") == "MISS")
            let stranger = try d.get(privatePath, d.readers[0])
            #expect(stranger.status == 200 && Devices.ids(stranger).isEmpty, "served alice's page: \(stranger.text)")
            #expect(stranger.header("X-Cache-Status") == "MISS")
        }
        // A long poll and an event stream of the public set go past the cache too.
        let waited = try d.get("/v1/changes?limit=100&wait=0&stream=set:\(open.id)", d.readers[0])
        #expect(waited.header("X-Cache-Status") == "BYPASS" && waited.header("Cache-Control") == "private, no-store")

        // (d) A change to the public set: later devices see it once the kept
        // page's max-age has passed (Ferry answers it again then), never later.
        let term = try Self.addTerm(d, to: open.id, word: "new")
        var seen: [String] = []
        try waitUntil("a device to see the new term through nginx", within: 30, every: 0.1) {
            let answer = try d.get(cachedPath, d.readers[seen.count % d.readers.count])
            let status = answer.header("X-Cache-Status") ?? "none"
            seen.append(status)
            guard Devices.ids(answer).contains(term) else { return false }
            // Ferry made this answer: the kept one had expired.
            #expect(status == "EXPIRED" || status == "MISS", "\(seen)")
            return true
        }
    }
}
