import Foundation
import Testing

extension Resources {
    /// Row Level Security through the API: another user's rows are 404 in
    /// every action (never 403: nothing is said of a row the caller cannot read),
    /// join tables included; a row the caller reads but may not write is 403.
    @Suite struct CrossUserTests {
        @Test func anotherUsersRowsAreNotFoundInEveryAction() throws {
            let alice = try ResourceFixture.user("alice")
            let bob = try ResourceFixture.user("bob")
            let set = try alice.createSet("secret")
            let term = try alice.createTerm(set: set.id)
            let folder = try alice.call("POST", "/v1/folders", json: ["name": "F"]).object
            let link = try alice.call("POST", "/v1/folder_sets", json: ["folder_id": folder.id, "set_id": set.id])
            #expect(link.status == 201)
            let rows = [("study_sets", set.id), ("terms", term.id), ("folders", folder.id), ("folder_sets", link.object.id)]
            for (resource, id) in rows {
                let path = "/v1/\(resource)/\(id)"
                #expect(try bob.call("GET", path).status == 404, "GET \(path)")
                #expect(try bob.call("HEAD", path).status == 404, "HEAD \(path)")
                #expect(try bob.call("PATCH", path, json: ["revision": 1]).status == 404, "PATCH \(path)")
                #expect(try bob.call("PUT", path, json: ["revision": 1]).status == 404, "PUT \(path)")
                #expect(try bob.call("DELETE", path + "?revision=1").status == 404, "DELETE \(path)")
                #expect(try bob.call("DELETE", path, headers: [("If-Match", "\"1\"")]).status == 404, "DELETE If-Match \(path)")
                let bulk = try bob.call("PATCH", "/v1/\(resource)", json: [["id": id, "revision": 1]])
                #expect(bulk.status == 404, "bulk PATCH \(path)")
                #expect(bulk.errors.first?["current"] == nil)
                #expect(try bob.call("DELETE", "/v1/\(resource)", json: [["id": id, "revision": 1]]).status == 404)
                let multi = try bob.call("GET", "/v1/\(resource)/\(id),\(UUID().uuidString)")
                #expect((multi.object["data"] as? [Any])?.isEmpty == true)
                let index = try bob.call("GET", "/v1/\(resource)?id=\(id)")
                #expect((index.object["data"] as? [Any])?.isEmpty == true)
                // The same answer as for an id that never existed.
                let never = try bob.call("GET", "/v1/\(resource)/\(UUID().uuidString)")
                #expect(never.status == 404)
            }
            // Creating into another user's set, or linking it, is refused like a missing set.
            let intoSet = try bob.call("POST", "/v1/terms", json: ["set_id": set.id, "word": "x"])
            #expect(intoSet.status == 422)
            #expect(intoSet.errors.first?["field"] as? String == "set_id")
            #expect(intoSet.errors.first?["reason"] as? String == "not_found")
            let bobFolder = try bob.call("POST", "/v1/folders", json: ["name": "B"]).object
            let linkIt = try bob.call("POST", "/v1/folder_sets", json: ["folder_id": bobFolder.id, "set_id": set.id])
            #expect(linkIt.status == 422)
            #expect(linkIt.errors.first?["field"] as? String == "set_id")
            let intoFolder = try bob.call("POST", "/v1/folder_sets", json: ["folder_id": folder.id, "set_id": UUID().uuidString])
            #expect(intoFolder.status == 422)
            #expect(try alice.call("GET", "/v1/terms/\(term.id)").object.revision == 1, "nothing changed")
        }

        /// The one answer that tells a taken id: a create cannot be 201 over it. It shows
        /// nothing of the row, live or deleted (a tombstone the caller could read would be 410).
        @Test func aCreateWithAnotherUsersIDIs409WithNothingOfTheRow() throws {
            let alice = try ResourceFixture.user("alice")
            let bob = try ResourceFixture.user("bob")
            let live = try alice.createSet("secret").id
            let deleted = try alice.createSet("gone").id
            #expect(try alice.call("DELETE", "/v1/study_sets/\(deleted)?revision=1").status == 200)
            for id in [live, deleted] {
                let response = try bob.call("POST", "/v1/study_sets", json: ["id": id, "title": "mine"])
                #expect(response.status == 409, "\(response.text)")
                #expect(response.code == "already_exists", "\(response.text)")
                #expect(response.object["current"] == nil, "\(response.text)")
                #expect(!response.text.contains("secret") && !response.text.contains("gone"), "\(response.text)")
            }
        }

        @Test func collaboratorsShareASetButCannotManageItsCollaborators() throws {
            let alice = try ResourceFixture.user("alice")
            let bob = try ResourceFixture.user("bob")
            let carol = try ResourceFixture.user("carol")
            let set = try alice.createSet("shared")
            let collab = try alice.call("POST", "/v1/set_collaborators", json: ["set_id": set.id, "user_id": bob.userID])
            #expect(collab.status == 201, "\(collab.text)")
            #expect(try bob.call("GET", "/v1/study_sets/\(set.id)").status == 200)
            #expect(try bob.call("PATCH", "/v1/study_sets/\(set.id)", json: ["title": "edited", "revision": 1]).status == 200)
            // Bob can read the collaborator rows but not manage them: 403, which a client
            // takes for a refusal (a 404 it took for a row gone already, and dropped it).
            #expect(try bob.call("GET", "/v1/set_collaborators/\(collab.object.id)").status == 200)
            let remove = try bob.call("DELETE", "/v1/set_collaborators/\(collab.object.id)?revision=1")
            #expect(remove.status == 403 && remove.code == "forbidden", "\(remove.text)")
            let add = try bob.call("POST", "/v1/set_collaborators", json: ["set_id": set.id, "user_id": carol.userID])
            #expect(add.status == 422)
            #expect(add.errors.first?["reason"] as? String == "not_allowed")
        }
    }
}
