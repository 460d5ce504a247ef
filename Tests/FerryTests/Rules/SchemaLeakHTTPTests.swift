import Ferry
import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Testing

/// The consequences over HTTP of the mistakes ``SchemaLeakCheckTests`` plants, as a client
/// meets them through a real server, and `ferry check` naming each. The policy beside a
/// rule's and the hand-made `GRANT UPDATE (owner_id)` are shown in
/// `SchemaLeakCheckTests.theConfirmedLeaksOverHTTP`; the rest are here, on one server.
@Suite struct SchemaLeakHTTPTests {
    /// The problem's first `errors[]` entry.
    private func firstError(_ answer: TestHTTPClient.Response) -> [String: Any] {
        (answer.object["errors"] as? [[String: Any]])?.first ?? [:]
    }

    /// An id from a sequence under a rule: a create that leaves the id to the server is
    /// refused, and the 422 names the real cause (the id column and its default: clients
    /// must send ids), not a grant to add. Without the fix it said `not_granted`, "the
    /// server's database role lacks a grant this write needs".
    @Test func aCreateOnASequenceIdNamesTheIdNotAGrant() throws {
        let database = try ScratchDatabase.create(prefix: "ferry_leak")
        try database.applyMigrations(appFiles: SchemaLeakCheckTests.sound)
        let server = try TestServer(database: database)
        defer { server.stop() }
        let alice = try server.user("alice")
        let client = server.client()
        let asAlice = [("Authorization", "Bearer \(alice.token)")]
        let single = try client.request("POST", "/v1/tickets", headers: asAlice, json: ["body": "printer on fire"])
        let bulk = try client.request("POST", "/v1/tickets", headers: asAlice, json: [["body": "one"], ["body": "two"]])
        for answer in [single, bulk] {
            #expect(answer.status == 422, "\(answer.text)")
            #expect(answer.header("Content-Type")?.hasPrefix("application/problem+json") == true)
            #expect(answer.object["code"] as? String == "validation_failed")
            let error = firstError(answer)
            #expect(error["reason"] as? String == "offline_unsafe_id", "\(answer.text)")
            #expect(error["field"] as? String == "id")
            let detail = error["detail"] as? String ?? ""
            #expect(detail.contains("tickets.id is an integer the database makes from a sequence (DEFAULT nextval("), "\(detail)")
            #expect(detail.contains("clients must send ids, so the id column should be a uuid"), "\(detail)")
            #expect(!detail.contains("lacks a grant"), "\(detail)")
            #expect(!answer.text.contains("permission denied"), "PostgreSQL's message never reaches a client: \(answer.text)")
        }
        #expect(try database.column("SELECT count(*) FROM app.tickets") == ["0"])
    }

    /// Every other planted mistake, made before the server starts (as on a live database
    /// that restarts), shown as a client meets it.
    @Test func eachPlantedMistakeAsAClientMeetsIt() throws {
        let database = try ScratchDatabase.create(prefix: "ferry_leak")
        try database.applyMigrations(appFiles: SchemaLeakCheckTests.sound)
        let owner = try database.connect()
        for planted in SchemaLeakCheckTests.planted { try owner.execute(planted.sql) }
        owner.close()
        let server = try TestServer(database: database)
        defer { server.stop() }
        let alice = try server.user("alice")
        let bob = try server.user("bob")
        let carol = try server.user("carol")
        let client = server.client()
        let asAlice = [("Authorization", "Bearer \(alice.token)")]
        let asBob = [("Authorization", "Bearer \(bob.token)")]

        // ALTER POLICY … USING (true) on the diary: bob lists alice's diary, and edits it.
        let diary = try client.request("POST", "/v1/diary", headers: asAlice, json: ["id": UUID().uuidString.lowercased(), "body": "dear diary"])
        #expect(diary.status == 201, "\(diary.text)")
        let diaryID = diary.object["id"] as? String ?? ""
        let bobsDiary = try client.request("GET", "/v1/diary", headers: asBob)
        #expect(bobsDiary.status == 200 && bobsDiary.text.contains("dear diary"), "\(bobsDiary.text)")
        let edited = try client.request("PATCH", "/v1/diary/\(diaryID)", headers: asBob, json: ["body": "bob was here", "revision": 1])
        #expect(edited.status == 200, "\(edited.text)")

        // DROP POLICY ferry_rules_create on members: the owner can no longer share her project.
        let project = try client.request("POST", "/v1/projects", headers: asAlice, json: ["name": "shared"])
        #expect(project.status == 201, "\(project.text)")
        let projectID = project.object["id"] as? String ?? ""
        let member = try client.request("POST", "/v1/members", headers: asAlice, json: ["project_id": projectID, "user_id": carol.id])
        #expect(member.status == 422, "\(member.text)")
        #expect(firstError(member)["reason"] as? String == "not_allowed", "\(member.text)")

        // A sequence id: every create that leaves the id to the server is refused (see above).
        let ticket = try client.request("POST", "/v1/tickets", headers: asAlice, json: ["body": "x"])
        #expect(ticket.status == 422 && firstError(ticket)["reason"] as? String == "offline_unsafe_id", "\(ticket.text)")

        // A bigint id clients make: ids two users make collide. Bob's create of the id alice
        // already used is refused, though he cannot see her row: the id is not his to choose.
        let label = try client.request("POST", "/v1/labels", headers: asAlice, json: ["id": 1, "name": "alice's"])
        #expect(label.status == 201, "\(label.text)")
        let collision = try client.request("POST", "/v1/labels", headers: asBob, json: ["id": 1, "name": "bob's"])
        #expect([409, 422].contains(collision.status), "\(collision.text)")
        #expect(!collision.text.contains("alice's"), "the refusal shows nothing of alice's row: \(collision.text)")
        #expect(try database.column("SELECT name FROM app.labels") == ["alice's"])

        // GRANT DELETE and GRANT TRUNCATE: no HTTP surface. A DELETE over HTTP is a tombstone
        // (UPDATE … SET is_deleted) under the rule's policies, and nothing Ferry serves runs
        // TRUNCATE; SchemaLeakCheckTests shows the SQL-level consequence (a purge-flagged
        // session deleting with no tombstone). Here: a DELETE still leaves a tombstone.
        let note = try client.request("POST", "/v1/notes", headers: asAlice, json: ["id": UUID().uuidString.lowercased(), "body": "mine"])
        let noteID = note.object["id"] as? String ?? ""
        #expect(note.status == 201, "\(note.text)")
        let bobDeletes = try client.request("DELETE", "/v1/notes/\(noteID)", headers: asBob + [("If-Match", "\"1\"")])
        #expect(bobDeletes.status == 404, "\(bobDeletes.text)")
        let deleted = try client.request("DELETE", "/v1/notes/\(noteID)", headers: asAlice + [("If-Match", "\"1\"")])
        #expect(deleted.status < 300, "\(deleted.text)")
        #expect(try database.column("SELECT is_deleted::text FROM app.notes") == ["true"], "a tombstone, not a DELETE")

        // The SECURITY DEFINER function and the view: no HTTP surface. Ferry serves tables a
        // rule syncs, never functions or views; their leak is to SQL run as the serve role
        // (SchemaLeakCheckTests shows it).
        for path in ["/v1/project_names", "/v1/every_project"] {
            #expect(try client.request("GET", path, headers: asBob).status == 404, "\(path) is not served")
        }

        // ferry check names every one.
        let check = try FerryProcess.run(["check"], environment: ["FERRY_DATABASE_URL": database.appURL])
        #expect(check.status == 1, "\(check.stdout)\n\(check.stderr)")
        for planted in SchemaLeakCheckTests.planted {
            #expect(check.stdout.contains("error   \(planted.object): "), "\(planted.object) not named in:\n\(check.stdout)")
        }
    }
}
