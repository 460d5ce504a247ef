@testable import Ferry
import FerryHTTPTestSupport
import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

/// A write refused by a missing grant or by Row Level Security names the grant or the
/// policies, never a column that has nothing to do with it (issue 33).
@Suite struct RefusalCauseTests {
    /// The issue's table, made by hand the way docs/ARCHITECTURE.md used to say: an owner
    /// policy and a grant that leaves `is_deleted` out. And a table on a sync rule.
    static let app = [
        "0001_by_hand.sql": """
        CREATE SCHEMA app;
        CREATE TABLE app.todos (
            id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
            owner_id uuid NOT NULL DEFAULT ferry.current_user_id() REFERENCES ferry.users,
            title text NOT NULL,
            done boolean NOT NULL DEFAULT false);
        SELECT ferry.enable_sync('app.todos');
        ALTER TABLE app.todos ENABLE ROW LEVEL SECURITY;
        CREATE POLICY todos_owner ON app.todos
            USING (owner_id = ferry.current_user_id()) WITH CHECK (owner_id = ferry.current_user_id());
        GRANT USAGE ON SCHEMA app TO ferry_app;
        GRANT SELECT, INSERT (id, title, done), UPDATE (title, done) ON app.todos TO ferry_app;
        CREATE TABLE app.notes (id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
                                owner_id uuid NOT NULL REFERENCES ferry.users, body text NOT NULL DEFAULT '');
        SELECT ferry.sync_owned('app.notes', owner => 'owner_id');
        """
    ]

    @Test func aDeleteWithoutTheGrantIs405NamingTheGrant() throws {
        let database = try ScratchDatabase.create(prefix: "ferry_refusal")
        try database.applyMigrations(appFiles: Self.app)
        let server = try TestServer(database: database)
        defer { server.stop() }
        let alice = try server.user("alice")
        let client = server.client()
        let auth = [("Authorization", "Bearer \(alice.token)")]
        let created = try client.request("POST", "/v1/todos", headers: auth, json: ["title": "t"])
        #expect(created.status == 201, "\(created.text)")
        let id = created.object["id"] as? String ?? ""
        #expect(try client.request("PATCH", "/v1/todos/\(id)", headers: auth, json: ["done": true, "revision": 1]).status == 200)

        for (path, body) in [("/v1/todos/\(id)?revision=2", nil), ("/v1/todos", [["id": id, "revision": 2]] as Any?)] {
            let delete = try client.request("DELETE", path, headers: auth, json: body)
            #expect(delete.status == 405, "\(delete.text)")
            #expect(delete.object["code"] as? String == "method_not_allowed")
            #expect(
                (delete.object["detail"] as? String)?.contains("may not update is_deleted (GRANT UPDATE (is_deleted) ON app.todos")
                    == true, "\(delete.text)")
            #expect(delete.header("Allow")?.contains("DELETE") == false)
            #expect(!delete.text.contains("owner_id"))
        }
        // The OpenAPI document describes no DELETE it would refuse.
        let document = try client.request("GET", "/openapi.json").object
        let paths = document["paths"] as? [String: [String: Any]] ?? [:]
        #expect(paths["/v1/todos/{id}"]?["delete"] == nil && paths["/v1/todos"]?["delete"] == nil)
        #expect(paths["/v1/notes/{id}"]?["delete"] != nil)
    }

    @Test func aRefusalByRowLevelSecurityNamesThePoliciesAndNoColumn() throws {
        let database = try ScratchDatabase.create(prefix: "ferry_refusal")
        try database.applyMigrations(appFiles: Self.app)
        let server = try TestServer(database: database)
        defer { server.stop() }
        let alice = try server.user("alice"), bob = try server.user("bob")
        let client = server.client()
        let auth = [("Authorization", "Bearer \(bob.token)")]
        let single = try client.request("POST", "/v1/notes", headers: auth, json: ["owner_id": alice.id, "body": "as alice"])
        let bulk = try client.request(
            "POST", "/v1/notes", headers: auth,
            json: [
                ["body": "mine"], ["owner_id": alice.id, "body": "as alice"],
            ])
        for (answer, index) in [(single, 0), (bulk, 1)] {
            #expect(answer.status == 422, "\(answer.text)")
            let error = (answer.object["errors"] as? [[String: Any]])?.first ?? [:]
            #expect(error["index"] as? Int == index)
            #expect(error["reason"] as? String == "not_allowed")
            #expect(error["field"] is NSNull, "a refusal by a policy is about the row, not \(error["field"] ?? "")")
            #expect(
                error["detail"] as? String
                    == "Row Level Security refused this row: no policy of notes for writes (ferry_rules_all) lets the caller write it")
        }
        #expect(try database.column("SELECT count(*) FROM app.notes") == ["0"], "the bulk create wrote nothing")
    }

    /// A refusal for want of a grant names no field either (WriteFailure, as ferry.item_errors).
    @Test func aRefusalForWantOfAGrantIsNotGrantedWithNoField() throws {
        let resource = try JSONDecoder().decode(
            Resource.self, from: Data(#"{"name": "todos", "schema": "app", "columns": [], "unique_keys": []}"#.utf8))
        let error = PostgresError(kind: .server, message: "permission denied for table todos", sqlState: "42501")
        let entries = WriteFailure.itemErrors(error, resource: resource)
        #expect(entries.count == 1)
        #expect(entries.first?["reason"] as? String == "not_granted")
        #expect(entries.first?["field"] is NSNull)
        let problem = WriteFailure.problem(entries, single: true, resource: resource)
        let detail = String(decoding: try problem.response.body.collected() ?? [], as: UTF8.self)
        #expect(detail.contains("lacks a grant this write needs on todos"), "\(detail)")
    }
}
