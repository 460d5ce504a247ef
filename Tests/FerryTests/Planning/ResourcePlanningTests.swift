@testable import Ferry
import FerryHTTP
import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

extension Resources {
    /// Parsing and planning, without a socket or a database.
    @Suite struct ResourcePlanningTests {
        @Test func bodyScanFindsShapeAndCount() throws {
            #expect(try BodyScan(Array("{\"a\": [1, {\"b\": \"],[\"}]}".utf8)).top == .object)
            let array = try BodyScan(Array(" [ {\"a\":1}, 2, \"x,y\", [3,4] ] ".utf8))
            #expect(array.top == .array)
            #expect(array.count == 4)
            #expect(try BodyScan(Array("[]".utf8)).count == 0)
            for bad in ["", "{", "[1,", "{}}", "{} {}", "\"s\"", "1", "{\"a\":\"unterminated}"] {
                #expect(throws: Problem.self, "\(bad)") { try BodyScan(Array(bad.utf8)) }
            }
            let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
            #expect(throws: Problem.self) { try BodyScan(Array(deep.utf8)) }
            let ok = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
            #expect(try BodyScan(Array(ok.utf8)).top == .array)
        }

        /// The array literal bound for filters and revision lists reads back, element
        /// for element, as PostgreSQL parses it: quotes, backslashes, braces, commas,
        /// NULL as a word and as a value, empty strings, non-ASCII.
        @Test func arrayLiteralRoundTripsThroughPostgreSQL() throws {
            let items: [String?] = ["plain", "", nil, "NULL", "a\"b", "c\\d", "{x,y}", " spaced ", "ü€😀", "\\\""]
            let literal = Bind.arrayLiteral(items)
            #expect(Bind.arrayLiteral([]) == "{}")
            let connection = try PostgresConnection(url: TestEnvironment.appURL())
            let result = try connection.query(
                "SELECT e, e IS NULL FROM unnest($1::text[]) WITH ORDINALITY AS u(e, n) ORDER BY n", [literal])
            #expect(result.rows.map { $0[0] } == items)
            #expect(result.rows.map { $0[1] } == items.map { $0 == nil ? "t" : "f" })
        }

        /// `If-None-Match` as a read compares it (weak comparison), from the request.
        private func hits(_ header: String, _ etag: String) -> Bool {
            ReadConditions(HTTPRequest(method: "GET", target: "/", path: "/", headers: HTTPHeaders([("If-None-Match", header)])))
                .notModified(etag: etag, lastModifiedMs: nil)
        }

        private func revisions(_ header: String?) -> [Int64]? {
            ReadConditions(HTTPRequest(method: "GET", target: "/", path: "/", headers: HTTPHeaders(header.map { [("If-None-Match", $0)] } ?? [])))
                .revisions?.map(\.value)
        }

        @Test func entityTagsCompare() {
            #expect(hits("\"3\"", "\"3\""))
            #expect(hits("W/\"3\"", "\"3\""))
            #expect(hits("\"1\", W/\"3\"", "\"3\""))
            #expect(hits("*", "\"3\""))
            #expect(!hits("\"4\"", "\"3\""))
            #expect(!hits("3", "\"3\""))
            #expect(EntityTag.matchRevisions("\"3\", W/\"4\", \"x\"")?.map(\.value) == [3])
            // List syntax: junk up to the next comma matches nothing, an unterminated tag ends the list, `*` anywhere is `*`.
            #expect(EntityTag.parseList("\"a\", junk, W/\"b\",W/x, \"c")?.map { "\($0.weak) \($0.opaque)" } == ["false a", "true b"])
            #expect(EntityTag.parseList(" , \t,")?.isEmpty == true)
            #expect(EntityTag.parseList("\"a\", *") == nil)
            #expect(EntityTag.parseList("\"\"")?.map(\.opaque) == [""])
            // Truncated and hostile lists end cleanly: no tag, no trap.
            for junk in ["\"", "W/", "W", "W/\"", ",,\"", "\u{0}\"a\"", "\"a\"W/", String(repeating: "W/", count: 1000)] {
                #expect(EntityTag.parseList(junk) != nil, "\(junk)")
                #expect(!hits(junk, "\"3\""), "\(junk)")
            }
            #expect(hits("\"3\"", "W/\"3\""))
            #expect(!hits("\"3\"", "3"))
            #expect(EntityTag.matchRevisions("*") == nil)
            // What the database is told to leave the body out for: exactly the tags the comparison accepts.
            #expect(revisions("\"3\", W/\"4\", \"x\", \"05\", \"-0\"") == [3, 4])
            #expect(revisions("*") == nil)
            #expect(revisions("\"x\"") == nil)
            #expect(revisions(nil) == nil)
            for header in ["\"3\"", "W/\"3\"", "\"03\"", "\"+3\"", "\"3 \""] {
                #expect((revisions(header)?.contains(3) ?? false) == hits(header, "\"3\""), "\(header)")
            }
        }

        @Test func httpDatesRoundTrip() {
            let text = HTTPDateFormat.format(milliseconds: 784_111_777_123)
            #expect(text == "Sun, 06 Nov 1994 08:49:37 GMT")
            #expect(HTTPDateFormat.parse(text) == 784_111_777)
            #expect(HTTPDateFormat.parse("Sunday, 06-Nov-94 08:49:37 GMT") == nil)
            #expect(HTTPDateFormat.format(milliseconds: 0) == "Thu, 01 Jan 1970 00:00:00 GMT")
            #expect(HTTPDateFormat.format(milliseconds: 1_795_315_727_779) == "Sun, 22 Nov 2026 02:48:47 GMT")
        }

        @Test func uuidShapes() {
            #expect(ValueKind.isUUID("cfecfe5c-e8f9-4cdb-bdd0-dca7e335906d"))
            #expect(ValueKind.isUUID("CFECFE5CE8F94CDBBDD0DCA7E335906D"))
            #expect(!ValueKind.isUUID("cfecfe5c-e8f9-4cdb-bdd0-dca7e335906"))
            #expect(!ValueKind.isUUID("cfecfe5ce-8f9-4cdb-bdd0-dca7e335906d"))
            #expect(!ValueKind.isUUID("cfecfe5c-e8f9-4cdb-bdd0-dca7e335906g"))
            #expect(!ValueKind.isUUID("cfecfe5c-e8f9-4cdb-bdd0dca7e335906d-"))
            #expect(!ValueKind.isUUID("cfecfe5c-e8f94cdbbdd0dca7e335906d"))
            #expect(!ValueKind.isUUID(""))
            #expect(!ValueKind.isUUID("\u{E9}fecfe5c-e8f9-4cdb-bdd0-dca7e33590"))
        }

        @Test func indexQueriesParseAndPlanWithParameters() throws {
            let resource = Self.terms
            let (a, b) = ("cfecfe5c-e8f9-4cdb-bdd0-dca7e335906d", "0e6c4a5e-5d0b-4f7e-9d2a-3b1c2d4e5f60")
            let query = try IndexQuery(
                [("set_id", "\(a),\(b)"), ("order", "word.desc,rank"), ("limit", "5")],
                resource: resource, defaultLimit: 100, maxLimit: 1000)
            #expect(query.binds.map(\.text) == ["{\"\(a)\",\"\(b)\"}", "5"])
            let sql = IndexSQL(resource: resource, query: query).sql
            #expect(sql.contains("t.\"set_id\" = ANY ($1::uuid[])"))
            #expect(sql.contains("ORDER BY t.\"word\" DESC, t.\"rank\" ASC, t.\"id\" ASC"))
            #expect(sql.contains("NOT t.\"is_deleted\""))
            #expect(!sql.contains("_ferry_field_revisions"))
            #expect(throws: Problem.self) { try IndexQuery([("nope", "1")], resource: resource, defaultLimit: 100, maxLimit: 1000) }
            #expect(throws: Problem.self) { try IndexQuery([("order", "x.desc")], resource: resource, defaultLimit: 100, maxLimit: 1000) }
        }

        @Test func writePlansQuoteIdentifiersAndBindValues() {
            let resource = Self.terms
            let refs = ReferenceCheck(resource: resource, targets: ["set_id": "\"app\".\"study_sets\""])
            let create = CreateSQL(resource: resource, references: refs).sql
            #expect(create.contains("INSERT INTO \"app\".\"terms\""))
            #expect(create.contains("ON CONFLICT (\"id\") DO NOTHING"))
            #expect(create.contains("$1::jsonb"))
            let patch = UpdateSQL(resource: resource, mode: .patch, references: refs).sql
            #expect(patch.contains("FOR UPDATE OF t"))
            #expect(patch.contains("_ferry_field_revisions"))
            #expect(!patch.contains("\"set_id\" = (st.m)"), "set_id is not updatable")
        }

        @Test func theCatalogWorksOutEachResourcesReferenceChecksOnce() throws {
            let sets = try JSONDecoder().decode(
                Resource.self,
                from: Data(
                    """
                    {"name": "study_sets", "schema": "app", "unique_keys": [], "constraints": {},
                     "columns": [{"name": "id", "type": "uuid", "nullable": false, "has_default": true, "insertable": true, "updatable": false, "references": null}]}
                    """.utf8))
            let catalog = SchemaCatalog(tables: [Self.terms, sets, Self.notes])
            let terms = catalog.references(for: Self.terms)
            #expect(terms.targets == ["set_id": "\"app\".\"study_sets\""])
            #expect(terms.key == "set_id>\"app\".\"study_sets\"")
            #expect(catalog.references(for: Self.notes).targets.isEmpty, "folders is not in this catalog: PostgreSQL's to check")
            #expect(catalog.referenceChecks.count == 3)
            let alone = SchemaCatalog(tables: [Self.terms])
            #expect(alone.references(for: Self.terms).targets.isEmpty, "no study_sets resource, no check")
        }

        @Test func contentTypeJSONIsRecognisedOnBytes() {
            for good in [
                "application/json", "Application/JSON; charset=utf-8", " application/json ", "application/json;",
                "application/json\t; q=1",
            ] {
                #expect(RequestBody.isJSON(good), "\(good)")
            }
            for bad in ["", "application/jsonx", "text/json", "application/json-patch+json", "application/ json", ";application/json"] {
                #expect(!RequestBody.isJSON(bad), "\(bad)")
            }
        }

        @Test func patchFastPathIsOneUpdateThatLeavesReferencesToTheFullPlan() {
            let refs = ReferenceCheck(resource: Self.terms, targets: ["set_id": "\"app\".\"study_sets\""])
            let plan = FastUpdateSQL(resource: Self.terms, mode: .patch, references: refs)
            #expect(plan.applies)
            let sql = plan.sql
            #expect(sql.contains("UPDATE \"app\".\"terms\" AS t SET (\"word\", \"rank\") = (SELECT"))
            #expect(!sql.contains("FOR UPDATE"), "the UPDATE itself locks and re-checks the row")
            #expect(sql.contains("jsonb_populate_record(t, "), "merged from the row being updated")
            #expect(!sql.contains("?| ARRAY['set_id']"), "a read-only reference is only compared, as the full plan does")
            #expect(sql.contains("NOT (i.item ? 'set_id' AND"), "a changed read-only field takes the full plan")
            #expect(sql.contains("$3::bigint[]") && sql.contains("$4::boolean"))
            #expect(sql.contains("NOT EXISTS (SELECT 1 FROM jsonb_each(i.item) AS k WHERE (CASE k.key"), "any bad field takes the full plan")
            #expect(
                sql.contains("((m.\"word\") COLLATE pg_catalog.\"C\" IS DISTINCT FROM (t.\"word\") COLLATE pg_catalog.\"C\" OR"),
                "a PATCH that changes nothing takes the full plan")
            let frozen = FastUpdateSQL(resource: Self.frozen, mode: .patch, references: ReferenceCheck(resource: Self.frozen, targets: [:]))
            #expect(!frozen.applies, "nothing to change: only the full plan can answer")
        }

        @Test func putFastPathResetsWhatItLeavesOutAndNeedsTheRequiredFields() {
            let refs = ReferenceCheck(resource: Self.terms, targets: ["set_id": "\"app\".\"study_sets\""])
            let sql = FastUpdateSQL(resource: Self.terms, mode: .put, references: refs).sql
            #expect(sql.contains("CASE WHEN i.item ? 'word' THEN m.\"word\" ELSE ''::text END"), "left out: the default")
            #expect(sql.contains("CASE WHEN i.item ? 'rank' THEN m.\"rank\" ELSE 'U'::text END"))
            #expect(!sql.contains("?&"), "terms has no required updatable field")
            #expect(!sql.contains("(m.\"word\") COLLATE pg_catalog.\"C\" IS DISTINCT FROM"), "a PUT writes even when nothing changed")
            let noteRefs = ReferenceCheck(resource: Self.notes, targets: ["folder_id": "\"app\".\"folders\""])
            let notes = FastUpdateSQL(resource: Self.notes, mode: .put, references: noteRefs).sql
            #expect(notes.contains("i.item ?& ARRAY['body']::text[]"), "a required field left out takes the full plan (422)")
            #expect(notes.contains("NOT (i.item ?| ARRAY['folder_id']::text[])"), "a sent updatable reference takes the full plan")
            #expect(!FastUpdateSQL(resource: Self.terms, mode: .create, references: refs).applies)
        }

        @Test func deleteFastPathSoftDeletesOnlyALiveRow() {
            let plan = FastUpdateSQL(resource: Self.frozen, mode: .delete, references: ReferenceCheck(resource: Self.frozen, targets: [:]))
            #expect(plan.applies, "a row with nothing updatable can still be deleted")
            let sql = plan.sql
            #expect(sql.contains("UPDATE \"app\".\"frozen\" AS t SET \"is_deleted\" = true"))
            #expect(sql.contains("NOT t.\"is_deleted\""), "a tombstone is the full plan's answer (200, no write)")
            #expect(sql.contains("$3::bigint[]") && sql.contains("$4::boolean"))
            #expect(sql.contains("'is_deleted', true)"), "answers the tombstone")
            #expect(!sql.contains("jsonb_each"), "a delete has no fields to check")
        }

        static let notes: Resource = {
            let json = """
                {"name": "notes", "schema": "app", "unique_keys": [], "constraints": {},
                 "columns": [
                  {"name": "id", "type": "uuid", "nullable": false, "has_default": true, "insertable": true, "updatable": false, "references": null},
                  {"name": "body", "type": "text", "nullable": false, "has_default": false, "insertable": true, "updatable": true, "references": null},
                  {"name": "folder_id", "type": "uuid", "nullable": true, "has_default": false, "insertable": true, "updatable": true, "references": "folders"},
                  {"name": "revision", "type": "bigint", "nullable": false, "has_default": true, "insertable": false, "updatable": false, "references": null},
                  {"name": "last_modified", "type": "bigint", "nullable": false, "has_default": true, "insertable": false, "updatable": false, "references": null},
                  {"name": "is_deleted", "type": "boolean", "nullable": false, "has_default": true, "insertable": false, "updatable": true, "references": null}
                 ]}
                """
            return try! JSONDecoder().decode(Resource.self, from: Data(json.utf8))
        }()

        static let frozen: Resource = {
            let json = """
                {"name": "frozen", "schema": "app", "unique_keys": [], "constraints": {},
                 "columns": [
                  {"name": "id", "type": "uuid", "nullable": false, "has_default": true, "insertable": true, "updatable": false, "references": null},
                  {"name": "label", "type": "text", "nullable": false, "has_default": false, "insertable": true, "updatable": false, "references": null}
                 ]}
                """
            return try! JSONDecoder().decode(Resource.self, from: Data(json.utf8))
        }()

        static let terms: Resource = {
            let json = """
                {"name": "terms", "schema": "app", "unique_keys": [], "constraints": {"terms_word_length": ["word"]},
                 "columns": [
                  {"name": "id", "type": "uuid", "nullable": false, "has_default": true, "insertable": true, "updatable": false, "references": null, "default_sql": "gen_random_uuid()"},
                  {"name": "set_id", "type": "uuid", "nullable": false, "has_default": false, "insertable": true, "updatable": false, "references": "study_sets"},
                  {"name": "word", "type": "text", "nullable": false, "has_default": true, "insertable": true, "updatable": true, "references": null, "default_sql": "''::text"},
                  {"name": "rank", "type": "text", "nullable": false, "has_default": true, "insertable": true, "updatable": true, "references": null, "default_sql": "'U'::text"},
                  {"name": "revision", "type": "bigint", "nullable": false, "has_default": true, "insertable": false, "updatable": false, "references": null},
                  {"name": "last_modified", "type": "bigint", "nullable": false, "has_default": true, "insertable": false, "updatable": false, "references": null},
                  {"name": "is_deleted", "type": "boolean", "nullable": false, "has_default": true, "insertable": false, "updatable": true, "references": null}
                 ]}
                """
            return try! JSONDecoder().decode(Resource.self, from: Data(json.utf8))
        }()
    }
}
