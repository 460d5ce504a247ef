import FerryTestSupport
import Foundation
import Testing

extension Resources {
    /// Issue 21's SQL injection sweep: hostile strings through every place a
    /// request carries text into SQL (path segments, filter names and values,
    /// `order`, paging tokens, cursors, body keys and values, batch paths).
    /// No answer may be a 5xx, none may take as long as a smuggled `pg_sleep(20)`,
    /// and nothing outside the caller's own rows may change.
    @Suite struct InjectionSweepTests {
        static let hostile: [String] = [
            "'", "''", "\"", "\\", ";", "--", "/*", "*/", "%", "_", "$1", "?",
            "' OR '1'='1", "1 OR 1=1", "1; DELETE FROM app.study_sets", "x'; DROP TABLE app.terms; --",
            "\") OR true --", "id\" DESC, (SELECT pg_sleep(20)) --", "(SELECT pg_sleep(20))", "word; SELECT pg_sleep(20)",
            "pg_sleep(20)", "app.terms", "ferry.users", "creator_id", "id::text", "rank COLLATE \"C\"",
            "\u{202E}rtl", "ü", "😀", String(repeating: "A", count: 3_000),
        ]

        /// Everything the attacker must not be able to touch, as one digest per
        /// table: the victim's rows and user, and every schema object and policy.
        /// (Other suites share this database and write their own rows meanwhile.)
        static func fingerprint(_ server: TestServer, victim: String) throws -> [String] {
            let statements = [
                "SELECT md5(coalesce(string_agg(t::text, ',' ORDER BY t.id), '')) FROM app.study_sets t WHERE t.creator_id = $1::uuid",
                """
                SELECT md5(coalesce(string_agg(t::text, ',' ORDER BY t.id), '')) FROM app.terms t
                  JOIN app.study_sets s ON s.id = t.set_id WHERE s.creator_id = $1::uuid
                """,
                "SELECT md5(coalesce(string_agg(t::text, ',' ORDER BY t.id), '')) FROM app.folders t WHERE t.owner_id = $1::uuid",
                "SELECT md5(coalesce(string_agg(u::text, ',' ORDER BY u.id), '')) FROM ferry.users u WHERE u.id = $1::uuid",
                """
                SELECT md5(string_agg(n.nspname || '.' || c.relname || ':' || c.relkind::text, ',' ORDER BY n.nspname, c.relname))
                  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname IN ('app', 'ferry') AND $1 <> ''
                """,
                "SELECT md5(string_agg(polname, ',' ORDER BY polname)) FROM pg_policy WHERE $1 <> ''",
            ]
            return try statements.map { sql in try server.ownerQuery(sql, [victim]).first?.string(0) ?? "-" }
        }

        static func encode(_ text: String) -> String {
            text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
        }

        @Test func hostileStringsNeverReachSQLAsCodeAndTouchNothingOutsideTheCallersRows() throws {
            let victim = try ResourceFixture.user("victim")
            let victimSet = try #require(try victim.createSet("victim's")["id"] as? String)
            _ = try victim.call("POST", "/v1/terms", json: ["set_id": victimSet, "word": "private", "rank": "U"])
            _ = try victim.call("POST", "/v1/folders", json: ["name": "victim's folder"])
            let attacker = try ResourceFixture.user("attacker")
            let ownSet = try #require(try attacker.createSet("attacker's")["id"] as? String)
            let before = try Self.fingerprint(attacker.server, victim: victim.userID)
            #expect(!before.contains("-") && !before.contains("d41d8cd98f00b204e9800998ecf8427e"), "every digest covers rows: \(before)")

            var sent = 0
            for text in Self.hostile {
                let h = Self.encode(text)
                var calls: [(String, String, Any?)] = [
                    ("GET", "/v1/\(h)", nil),
                    ("GET", "/v1/study_sets/\(h)", nil),
                    ("PATCH", "/v1/study_sets/\(h)", ["title": "x"]),
                    ("DELETE", "/v1/study_sets/\(h)", nil),
                    ("GET", "/v1/terms?\(h)=1", nil),
                    ("GET", "/v1/terms?set_id=\(h)", nil),
                    ("GET", "/v1/terms?word=\(h)", nil),
                    ("GET", "/v1/terms?word=a,\(h)", nil),
                    ("GET", "/v1/terms?order=\(h)", nil),
                    ("GET", "/v1/terms?order=word.\(h)", nil),
                    ("GET", "/v1/terms?limit=\(h)", nil),
                    ("GET", "/v1/terms?modified_since=\(h)", nil),
                    ("GET", "/v1/terms?include_deleted=\(h)", nil),
                    ("GET", "/v1/terms?paging_token=\(h)&page=2", nil),
                    ("GET", "/v1/terms?paging_token=\(h)&page=\(h)", nil),
                    ("GET", "/v1/changes?since=\(h)", nil),
                    ("GET", "/v1/changes?resources=\(h)", nil),
                    ("GET", "/v1/changes?limit=\(h)", nil),
                    ("POST", "/v1/study_sets", ["title": "t", text: "x"]),
                    ("POST", "/v1/study_sets", ["title": text]),
                    ("PATCH", "/v1/study_sets/\(ownSet)", [text: 1]),
                    ("PATCH", "/v1/study_sets/\(ownSet)", ["description": text]),
                    ("POST", "/v1/terms", ["set_id": text, "word": "w", "rank": "U"]),
                    ("POST", "/v1/terms", ["set_id": ownSet, "word": "w", "rank": text]),
                    ("POST", "/v1/batch", ["operations": [["method": "GET", "path": "/v1/\(h)"]]]),
                    ("POST", "/v1/batch", ["operations": [["method": "PATCH", "path": "/v1/study_sets/\(h)", "body": ["title": "x"]]]]),
                    ("POST", "/v1/batch", ["operations": [["method": "POST", "path": "/v1/study_sets?\(h)=1", "body": ["title": "x"]]]]),
                ]
                if text.utf8.count < 200 { calls.append(("GET", "/v1/study_sets?\(h)=\(h)&order=\(h)", nil)) }
                for (method, path, json) in calls {
                    let headers = method == "PATCH" || method == "DELETE" ? [("If-Match", "*")] : []
                    let started = Date()
                    let response = try attacker.call(method, path, json: json, headers: headers)
                    let seconds = Date().timeIntervalSince(started)
                    sent += 1
                    #expect(response.status < 500, "\(method) \(path): \(response.status) \(response.text.prefix(300))")
                    // A smuggled pg_sleep(20) would hold the request 20 s; a busy machine, a few.
                    #expect(seconds < 15, "\(method) \(path) took \(seconds) s: a pg_sleep ran?")
                }
            }
            #expect(sent > 800)
            #expect(
                try Self.fingerprint(attacker.server, victim: victim.userID) == before,
                "the victim's rows and user, the schema objects and the policies are as they were")
            // The victim still reads exactly what it wrote.
            let terms = try victim.call("GET", "/v1/terms?set_id=\(victimSet)").object["data"] as? [[String: Any]]
            #expect(terms?.compactMap { $0["word"] as? String } == ["private"])
        }
    }
}
