@testable import Ferry
import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

extension Resources {
    /// The Swift pre-check that lets a single PATCH or PUT skip the per-field
    /// check in PostgreSQL must never pass what that check fails.
    @Suite struct FieldPrecheckTests {
        /// Columns of every kind ValueKind distinguishes, nullable and not.
        static let resource: Resource = {
            func column(_ name: String, _ type: String, nullable: Bool = false) -> String {
                """
                {"name": "\(name)", "type": "\(type)", "nullable": \(nullable), "has_default": true, "insertable": true,
                 "updatable": true, "references": null}
                """
            }
            let columns = [
                column("id", "uuid"), column("set_id", "uuid"), column("word", "text"), column("note", "text", nullable: true),
                column("n", "integer"), column("small", "smallint"), column("big", "bigint"), column("ratio", "double precision"),
                column("flag", "boolean"), column("tags", "text[]"), column("data", "jsonb", nullable: true),
                column("at", "timestamp with time zone"), column("revision", "bigint"), column("last_modified", "bigint"),
                column("is_deleted", "boolean"),
            ]
            let json = """
                {"name": "things", "schema": "app", "unique_keys": [], "constraints": {}, "columns": [\(columns.joined(separator: ","))]}
                """
            return try! JSONDecoder().decode(Resource.self, from: Data(json.utf8))
        }()

        static let values = [
            #""x""#, #""esc\"aped""#, "5", "-5", "0", "1.0", "1e2", "-0", "32767", "32768", "-32769",
            "9223372036854775807", "9223372036854775808", "-9223372036854775808", "true", "false", "null",
            "[1, \"a\"]", "[]", #"{"a": [1]}"#, "{}", #""00000000-0000-0000-0000-00000000000a""#,
            #""000000000000000000000000000000AB""#, #""0000000-0000-0000-0000-000000000000a""#,
            #""\u0030000000-0000-0000-0000-000000000000""#, #""not a uuid""#, #""2026-01-01T00:00:00Z""#,
        ]

        @Test func membersAreReadOrRefused() throws {
            let body = Array(#" { "a" : "x\"y" , "b":-1.5e3,"c":[{"d":"]"}],"e":{},"f":true,"g":null } "#.utf8)
            let members = try #require(ObjectMembers(body))
            #expect(members.members.map { String(decoding: body[$0.key], as: UTF8.self) } == ["a", "b", "c", "e", "f", "g"])
            #expect(
                members.members.map(\.value).map { value -> String in
                    switch value {
                    case .string(let range, let escaped): "s:\(String(decoding: body[range], as: UTF8.self)):\(escaped)"
                    case .number(let range): "n:\(String(decoding: body[range], as: UTF8.self))"
                    case .boolean: "b"
                    case .null: "null"
                    case .object: "o"
                    case .array: "a"
                    }
                } == [#"s:x\"y:true"#, "n:-1.5e3", "a", "o", "b", "null"])
            #expect(ObjectMembers(Array("{}".utf8))?.members.isEmpty == true)
            for unsure in [
                #"{"\u0061": 1}"#, #"{"a" 1}"#, #"{"a": 1,}"#, #"{"a": tru}"#, #"{"a": 1} x"#, "[1]", #"{"a": "#,
                #"{"a": [1}"#, #"{a: 1}"#, "{\"a\u{1}\": 1}", "",
            ] {
                #expect(ObjectMembers(Array(unsure.utf8)) == nil, "\(unsure)")
            }
        }

        /// Every one-field body of every column and value, and a few bodies of several
        /// fields, checked both ways against PostgreSQL: whatever the pre-check passes,
        /// FieldValidation passes too.
        @Test func neverPassesWhatPostgreSQLFails() throws {
            var bodies: [String] = []
            for column in Self.resource.columns.map(\.name) + ["unknown", "_ferry_xid"] {
                for value in Self.values { bodies.append("{\"\(column)\": \(value)}") }
            }
            bodies += [
                #"{"word": "a", "n": 1, "flag": false, "note": null}"#, #"{"word": "a", "word": 5}"#, #"{"word": 5, "word": "a"}"#,
                #"{"\u0077ord": "a"}"#, #"{"word": "a", "extra": 1}"#, "{}", #"{"revision": 3, "id": "anything", "is_deleted": 1}"#,
            ]
            let connection = try PostgresConnection(url: TestEnvironment.appURL())
            defer { connection.close() }
            for mode in [WriteMode.patch, .put] {
                let check = FieldPrecheck(resource: Self.resource, mode: mode)
                let sql = FieldValidation(resource: Self.resource, mode: mode).anyFieldFails(item: "b.body::jsonb")
                let result = try connection.query(
                    "SELECT b.body, \(sql) FROM unnest($1::text[]) WITH ORDINALITY AS b(body, n) WHERE $2::text IS NOT NULL ORDER BY b.n",
                    [Bind.arrayLiteral(bodies), "00000000-0000-0000-0000-000000000001"])
                #expect(result.rows.count == bodies.count)
                var passed = 0
                for row in result.rows {
                    let body = Array((row[0] ?? "").utf8)
                    let precheck = ObjectMembers(body).map { check.passes($0, in: body) } ?? false
                    let fails = row[1] == "t"
                    #expect(!(precheck && fails), "\(mode): the pre-check passes \(row[0] ?? "") which PostgreSQL fails")
                    if precheck { passed += 1 }
                }
                // Not vacuous: the plain valid bodies pass.
                #expect(passed > 100, "\(mode): only \(passed) bodies passed the pre-check")
                for body in [
                    #"{"word": "a"}"#, #"{"n": -5, "small": 32767, "big": 9223372036854775807}"#,
                    #"{"set_id": "00000000-0000-0000-0000-00000000000a", "tags": [], "data": {"x": 1}}"#,
                    #"{"at": "2026-01-01T00:00:00Z", "ratio": 1e2, "revision": 0, "note": null}"#,
                    // Not JSON, but the pre-check does not parse: PostgreSQL's cast refuses it (BodyTests).
                    #"{"word": "x\u12", "note": "x\q", "revision": 01}"#,
                ] {
                    let bytes = Array(body.utf8)
                    #expect(ObjectMembers(bytes).map { check.passes($0, in: bytes) } == true, "\(body)")
                }
                for body in [
                    #"{"word": null}"#, #"{"n": "5"}"#, #"{"small": 32768}"#, #"{"revision": -1}"#, #"{"unknown": 1}"#,
                    #"{"set_id": "\u0030000000-0000-0000-0000-000000000000"}"#, #"{"n": 1.0}"#,
                ] {
                    let bytes = Array(body.utf8)
                    #expect(ObjectMembers(bytes).map { check.passes($0, in: bytes) } != true, "\(body)")
                }
            }
        }
    }
}
