import FerryHTTPTestSupport
import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

extension Resources {
    /// Columns typed with a domain (`CREATE DOMAIN ... AS integer CHECK (...)`), as a
    /// team that brings its own schema has them: Ferry types them by their base
    /// type (what JSON they take, how a filter reads, what OpenAPI and the
    /// generated Swift say), and a domain's CHECK refusing a value names the field
    /// like a table's CHECK does. Until then a domain was a type Ferry did not
    /// know: `"7"` was stored in an integer domain, a filter value the domain
    /// refused answered 500, a violation named no field.
    @Suite struct DomainColumnTests {
        static let schema = """
            CREATE DOMAIN app.card_label AS text CHECK (char_length(VALUE) BETWEEN 1 AND 20);
            CREATE DOMAIN app.card_points AS integer CONSTRAINT card_points_not_negative CHECK (VALUE >= 0);
            CREATE DOMAIN app.card_bonus AS app.card_points CONSTRAINT card_bonus_small CHECK (VALUE < 100);
            CREATE DOMAIN app.card_code AS character varying(8);
            CREATE DOMAIN app.card_state AS text NOT NULL DEFAULT 'draft' CONSTRAINT card_state_known CHECK (VALUE IN ('draft', 'done'));
            CREATE DOMAIN app.card_stage AS app.card_state;
            CREATE DOMAIN app.card_note AS text NOT NULL;
            CREATE TABLE app.cards (id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
                                   label app.card_label NOT NULL DEFAULT 'card',
                                   points app.card_points NOT NULL DEFAULT 0,
                                   bonus app.card_bonus,
                                   code app.card_code,
                                   state app.card_state,
                                   stage app.card_stage,
                                   note app.card_note DEFAULT '');
            """

        /// A scratch database with `app.cards` synced and granted.
        static func database() throws -> ScratchDatabase {
            let database = try ScratchDatabase()
            let owner = try database.connect()
            defer { owner.close() }
            try owner.execute(schema)
            _ = try owner.query("SELECT ferry.enable_sync('app.cards')")
            _ = try owner.query("GRANT SELECT, INSERT, UPDATE ON app.cards TO ferry_app")
            return database
        }

        @Test func valuesAreCheckedAsTheBaseTypeAndAViolationNamesItsField() throws {
            let server = try TestServer(database: try Self.database())
            defer { server.stop() }
            let (_, token) = try server.user("domain_user")
            let me = API(client: server.client(), token: token, userID: "", server: server)

            let created = try me.call("POST", "/v1/cards", json: ["label": "first", "points": 3, "bonus": 5, "code": "AB"])
            #expect(created.status == 201, "\(created.text)")
            #expect(created.object["points"] as? Int == 3, "an integer domain's value is a JSON number")
            let path = "/v1/cards/\(created.object.id)"
            let star = [("If-Match", "*")]

            // The JSON type is the base type's: a string is no integer, a number no text.
            for (body, field) in [(["points": "7"], "points"), (["label": 5], "label"), (["bonus": "1"], "bonus")] as [([String: Any], String)] {
                let wrong = try me.call("POST", "/v1/cards", json: body)
                #expect(wrong.status == 422, "\(body): \(wrong.text)")
                #expect(wrong.errors.first?["field"] as? String == field, "\(body): \(wrong.text)")
                #expect(wrong.errors.first?["reason"] as? String == "wrong_type", "\(body): \(wrong.text)")
                let patched = try me.call("PATCH", path, json: body, headers: star)
                #expect(patched.status == 422, "\(body): \(patched.text)")
                #expect(patched.errors.first?["field"] as? String == field, "\(body): \(patched.text)")
            }

            // A domain's CHECK names its field, on create, on update (the fast path and the
            // full plan), in a bulk write, and through a domain over a domain.
            let violations: [([String: Any], String)] = [
                (["label": ""], "label"), (["label": String(repeating: "x", count: 21)], "label"),
                (["points": -1], "points"), (["bonus": -1], "bonus"), (["bonus": 100], "bonus"),
            ]
            for (body, field) in violations {
                let create = try me.call("POST", "/v1/cards", json: body)
                #expect(create.status == 422, "\(body): \(create.text)")
                #expect(named(create.errors, field), "\(body): \(create.text)")
                #expect(create.errors.first?["reason"] as? String == "check_violation", "\(body): \(create.text)")
                let patch = try me.call("PATCH", path, json: body, headers: star)
                #expect(patch.status == 422, "\(body): \(patch.text)")
                #expect(named(patch.errors, field), "\(body): \(patch.text)")
                var stale = body
                stale["revision"] = 1
                let full = try me.call("PATCH", path, json: stale)
                #expect(full.status == 422, "\(body): \(full.text)")
                #expect(named(full.errors, field), "\(body): \(full.text)")
                let bulk = try me.call("POST", "/v1/cards", json: [["label": "fine"], body])
                #expect(bulk.status == 422, "\(body): \(bulk.text)")
                #expect(named(bulk.errors.filter { $0["index"] as? Int == 1 }, field), "\(body): \(bulk.text)")
            }
            #expect(try me.call("GET", path).object.revision == 1, "nothing was written")

            // A domain's CHECK runs as the body's values are read, before the write's other
            // checks: a refused value sent with a stale revision is a 422, not a 409 (docs/API.md).
            #expect(try me.call("PATCH", path, json: ["label": "second"], headers: star).status == 200)
            let staleAndRefused = try me.call("PATCH", path, json: ["label": "", "revision": 1])
            #expect(staleAndRefused.status == 422, "\(staleAndRefused.text)")
            let staleOnly = try me.call("PATCH", path, json: ["label": "third", "revision": 1])
            #expect(staleOnly.status == 409, "\(staleOnly.text)")

            // Filters read the value as the base type: one the domain refuses matches nothing
            // (it cannot be stored) instead of failing the query; a non-number is a 400.
            let byPoints = try me.call("GET", "/v1/cards?points=3")
            #expect(rows(byPoints).count == 1, "\(byPoints.text)")
            let refused = try me.call("GET", "/v1/cards?label=\(String(repeating: "y", count: 30))")
            #expect(refused.status == 200, "\(refused.text)")
            #expect(rows(refused).isEmpty && refused.object["data"] != nil)
            let negative = try me.call("GET", "/v1/cards?points=-5")
            #expect(negative.status == 200 && rows(negative).isEmpty, "\(negative.text)")
            let notANumber = try me.call("GET", "/v1/cards?points=abc")
            #expect(notANumber.status == 400, "\(notANumber.text)")
            // A filter on a domain over varchar(8) is not cut to 8 characters.
            let byCode = try me.call("GET", "/v1/cards?code=AB")
            #expect(rows(byCode).count == 1, "\(byCode.text)")
            let longer = try me.call("GET", "/v1/cards?code=ABCDEFGHIJ")
            #expect(longer.status == 200 && rows(longer).isEmpty, "\(longer.text)")
        }

        /// A domain's NOT NULL and DEFAULT hold as a column's own do: a create that leaves
        /// the column out gets the domain's default (through a domain over it too), a null
        /// is refused naming the field, and GET /v1 and OpenAPI call the
        /// column not nullable with a default. Until then Ferry wrote an explicit NULL for
        /// a left-out column, so the domain's default never applied and the create failed
        /// with a 422 naming no field.
        @Test func aDomainsNotNullAndDefaultHoldLikeTheColumnsOwn() throws {
            let server = try TestServer(database: try Self.database())
            defer { server.stop() }
            let (_, token) = try server.user("domain_defaults")
            let me = API(client: server.client(), token: token, userID: "", server: server)

            let created = try me.call("POST", "/v1/cards", json: ["label": "defaults"])
            #expect(created.status == 201, "\(created.text)")
            #expect(created.object["state"] as? String == "draft", "\(created.text)")
            #expect(created.object["stage"] as? String == "draft", "a domain over a domain takes its default: \(created.text)")
            #expect(created.object["note"] as? String == "", "\(created.text)")
            let bulk = try me.call("POST", "/v1/cards", json: [["label": "one"], ["label": "two", "state": "done"]])
            #expect(bulk.status == 200 || bulk.status == 201, "\(bulk.text)")
            #expect(bulk.array.map { $0["state"] as? String } == ["draft", "done"], "\(bulk.text)")

            let path = "/v1/cards/\(created.object.id)"
            for field in ["state", "stage", "note"] {
                let patch = try me.call("PATCH", path, json: [field: NSNull()], headers: [("If-Match", "*")])
                #expect(patch.status == 422, "\(field): \(patch.text)")
                #expect(patch.errors.first?["field"] as? String == field, "\(field): \(patch.text)")
                #expect(patch.errors.first?["reason"] as? String == "not_null", "\(field): \(patch.text)")
                let create = try me.call("POST", "/v1/cards", json: [["label": "fine"], [field: NSNull()]])
                #expect(create.status == 422, "\(field): \(create.text)")
                let second = create.errors.filter { $0["index"] as? Int == 1 }
                #expect(second.first?["field"] as? String == field, "\(field): \(create.text)")
                #expect(second.first?["reason"] as? String == "not_null", "\(field): \(create.text)")
            }
            // A PUT that leaves the column out sets it to its default, the domain's here.
            let put = try me.call("PUT", path, json: ["label": "put", "points": 1, "state": "done", "note": "kept"], headers: [("If-Match", "*")])
            #expect(put.status == 200, "\(put.text)")
            #expect(put.object["stage"] as? String == "draft" && put.object["state"] as? String == "done", "\(put.text)")
            #expect(try me.call("GET", path).object["note"] as? String == "kept")

            let listing = try server.client().request("GET", "/v1", headers: [("Authorization", "Bearer \(token)")]).object
            let cards = (listing["resources"] as? [[String: Any]])?.first { $0["name"] as? String == "cards" }
            let columns = Dictionary(
                uniqueKeysWithValues: (cards?["columns"] as? [[String: Any]] ?? []).map { ($0["name"] as? String ?? "", $0) })
            for name in ["state", "stage"] {
                #expect(columns[name]?["nullable"] as? Bool == false, "\(name): \(columns[name] ?? [:])")
                #expect(columns[name]?["has_default"] as? Bool == true, "\(name): \(columns[name] ?? [:])")
            }
            #expect(columns["note"]?["nullable"] as? Bool == false)
            #expect(columns["bonus"]?["nullable"] as? Bool == true, "a domain without NOT NULL leaves the column nullable")
            #expect(columns["bonus"]?["has_default"] as? Bool == false)

            let document = try server.client().request("GET", "/openapi.json").object
            let schemas = (document["components"] as? [String: Any])?["schemas"] as? [String: Any]
            let properties = ((schemas?["cards"] as? [String: Any])?["properties"] as? [String: Any]) ?? [:]
            #expect((properties["state"] as? [String: Any])?["type"] as? String == "string", "not nullable: \(properties["state"] ?? "")")
        }

        /// An id typed with a domain over uuid (`CREATE DOMAIN app.uid AS uuid`) serves as a
        /// uuid does, through an owned table and a child table that references it, the feed
        /// and a delete's cascade; `ferry check` took it for an id type Ferry does not serve
        /// (and for server-made ids), three false errors.
        @Test func anIdTypedWithADomainServesAndPassesTheCheck() throws {
            let me = try ResourceFixture.own(
                schema: """
                    CREATE DOMAIN app.uid AS uuid;
                    CREATE TABLE app.notes (id app.uid PRIMARY KEY DEFAULT gen_random_uuid(),
                                            owner_id uuid NOT NULL REFERENCES ferry.users, body text);
                    SELECT ferry.sync_owned('app.notes', owner => 'owner_id');
                    CREATE TABLE app.lines (id app.uid PRIMARY KEY, note_id app.uid NOT NULL REFERENCES app.notes, body text);
                    SELECT ferry.sync_child('app.lines', parent => 'note_id');
                    """, user: "domain_ids")
            defer { me.server.stop() }
            let note = try me.call("POST", "/v1/notes", json: ["id": UUID().uuidString.lowercased(), "owner_id": me.userID, "body": "a"])
            #expect(note.status == 201, "\(note.text)")
            let line = try me.call("POST", "/v1/lines", json: ["id": UUID().uuidString.lowercased(), "note_id": note.object.id, "body": "x"])
            #expect(line.status == 201, "\(line.text)")
            let patched = try me.call("PATCH", "/v1/notes/\(note.object.id)", json: ["body": "b"], headers: [("If-Match", "*")])
            #expect(patched.status == 200 && patched.object.revision == 2, "\(patched.text)")
            #expect(try me.call("GET", "/v1/notes/NOT-A-UUID").status == 404)
            let lines = try me.call("GET", "/v1/lines?note_id=\(note.object.id)")
            #expect((lines.object["data"] as? [Any])?.count == 1, "\(lines.text)")
            #expect(try me.call("DELETE", "/v1/notes/\(note.object.id)", headers: [("If-Match", "*")]).status == 200)
            // The feed delivers a commit once no transaction that may precede it runs: on a
            // loaded machine that can be a moment after the answer, so wait for the state.
            var feed = try me.call("GET", "/v1/changes")
            var gone: [[String: Any]] = []
            _ = try eventually(within: 60, every: 0.2) {
                feed = try me.call("GET", "/v1/changes")
                gone = (feed.object["changes"] as? [[String: Any]] ?? []).compactMap { $0["data"] as? [String: Any] }
                return gone.count == 2
            }
            #expect(gone.count == 2 && gone.allSatisfy { $0["is_deleted"] as? Bool == true }, "the line goes with its note: \(feed.text)")

            let check = try FerryProcess.run(
                ["check"],
                environment: [
                    "FERRY_DATABASE_URL": me.server.database.appURL, "FERRY_DATABASE_MIGRATION_URL": me.server.database.ownerURL,
                ])
            #expect(!check.stdout.contains("app.notes") && !check.stdout.contains("app.lines"), "\(check.stdout)")
        }

        /// The rows of an Index answer.
        func rows(_ response: TestHTTPClient.Response) -> [[String: Any]] { response.object["data"] as? [[String: Any]] ?? [] }

        /// Whether `errors` name `field` as a check violation, and no column but the ones its
        /// domain types: a CHECK of the inner domain of a domain over a domain names
        /// each column typed with either (`bonus = -1` breaks `card_points`' CHECK:
        /// points and bonus), as a constraint over several columns names each.
        func named(_ errors: [[String: Any]], _ field: String) -> Bool {
            let fields = Set(errors.compactMap { $0["field"] as? String })
            let allowed: Set<String> = field == "bonus" || field == "points" ? ["bonus", "points"] : [field]
            return fields.contains(field) && fields.isSubset(of: allowed)
                && errors.allSatisfy { $0["reason"] as? String == "check_violation" }
        }

        @Test func theListingOpenAPIAndTheConsoleTypeADomainByItsBase() throws {
            let fixture = try ConsoleFixture(database: try Self.database())
            defer { fixture.stop() }
            let user = try fixture.server.user("domain_reader")
            let card = try fixture.app("POST", "/v1/cards", token: user.token, json: ["label": "seen", "points": 4])
            #expect(card.status == 201, "\(card.text)")

            let listing = try fixture.app("GET", "/v1", token: user.token).object
            let cards = (listing["resources"] as? [[String: Any]])?.first { $0["name"] as? String == "cards" }
            let columns = Dictionary(
                uniqueKeysWithValues: (cards?["columns"] as? [[String: Any]] ?? []).map { ($0["name"] as? String ?? "", $0) })
            #expect(columns["points"]?["type"] as? String == "app.card_points")
            #expect(columns["points"]?["base_type"] as? String == "integer")
            #expect(columns["bonus"]?["base_type"] as? String == "integer")
            #expect(columns["code"]?["base_type"] as? String == "character varying(8)")
            #expect(columns["label"]?["base_type"] as? String == "text")

            let document = try fixture.server.client().request("GET", "/openapi.json").object
            let schemas = (document["components"] as? [String: Any])?["schemas"] as? [String: Any]
            let properties = ((schemas?["cards"] as? [String: Any])?["properties"] as? [String: Any]) ?? [:]
            #expect((properties["points"] as? [String: Any])?["type"] as? String == "integer", "\(properties)")
            #expect((properties["code"] as? [String: Any])?["maxLength"] as? Int == 8, "\(properties)")

            // `ferry generate swift` types the columns by their base types.
            let output = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-domains-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: output) }
            let generated = try FerryProcess.run(
                ["generate", "swift", "--from", "http://127.0.0.1:\(fixture.server.port)", "--output", output.path])
            #expect(generated.status == 0, "\(generated.stderr)")
            let model = (try? String(contentsOf: output.appendingPathComponent("Card.swift"), encoding: .utf8)) ?? ""
            #expect(model.contains("public var points: Int?\n") && model.contains("public var bonus: Int?\n"), "\(model)")
            #expect(model.contains("public var label: String?\n"), "\(model)")

            // The console filters on a domain column as on its base type.
            let rows = try fixture.console("GET", "/resources/cards/rows?points=4")
            #expect(rows.status == 200, "\(rows.text)")
            #expect((rows.object["data"] as? [[String: Any]])?.count == 1, "\(rows.text)")
            let bad = try fixture.console("GET", "/resources/cards/rows?points=four")
            #expect(bad.status == 400, "\(bad.text)")
        }
    }
}
