import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Testing

/// Tokens belong to the user, resource, filters, order and page size that made them;
/// bad tokens and page numbers get clear answers.
@Suite final class PagingBindingTests {
    /// Per test: a server with 250 terms of alice's, bob a collaborator on her set,
    /// and the token of alice's first page.
    let server: TestServer
    let alice: Pager
    let bob: Pager
    let set: String
    let token: String

    init() throws {
        server = try TestServer()
        do {
            alice = try Pager(server: server, name: "alice")
            bob = try Pager(server: server, name: "bob")
            set = try alice.createSet()
            try PagingSeed.terms(server, set: set, count: 250)
            let added = try alice.call("POST", "/v1/set_collaborators", json: ["set_id": set, "user_id": bob.userID])
            try #require(added.status == 201, "\(added.text)")
            let first = try alice.call("GET", "/v1/terms?set_id=\(set)&limit=100")
            token = try #require(first.paging["token"] as? String)
        } catch {
            server.stop()
            throw error
        }
    }

    deinit { server.stop() }

    func page(_ who: Pager, _ query: String) throws -> TestHTTPClient.Response {
        try who.call("GET", "/v1/terms?" + query)
    }

    var fixture: PagingBindingTests { self }

    @Test func theOwnerReadsEveryPageWhateverTheParameterOrder() throws {
        let f = fixture
        let second = try f.page(f.alice, "limit=100&paging_token=\(f.token)&page=2&set_id=\(f.set)")
        #expect(second.status == 200, "\(second.text)")
        #expect(second.rows.count == 100)
        let last = try f.page(f.alice, "set_id=\(f.set)&limit=100&paging_token=\(f.token)&page=3")
        #expect(last.status == 200)
        #expect(last.rows.count == 50)
        #expect(last.paging["next"] is NSNull)
        #expect(last.header("Link") == nil)
        let again = try f.page(f.alice, "set_id=\(f.set)&limit=100&paging_token=\(f.token)")
        #expect(again.status == 200, "paging_token without page is page 1 of the snapshot")
        #expect(again.paging["page"] as? Int == 1)
    }

    @Test func anotherUserResourceFilterOrderOrPageSizeIsNotFound() throws {
        let f = fixture
        let t = "paging_token=\(f.token)&page=2"
        let attempts: [(Pager, String, String)] = [
            (f.bob, "/v1/terms?set_id=\(f.set)&limit=100&\(t)", "another user who can read the same rows"),
            (f.alice, "/v1/study_sets?limit=100&\(t)", "another resource"),
            (f.alice, "/v1/terms?set_id=\(f.set)&word=w1&limit=100&\(t)", "another filter"),
            (f.alice, "/v1/terms?limit=100&\(t)", "no filter"),
            (f.alice, "/v1/terms?set_id=\(f.set)&order=word&limit=100&\(t)", "another order"),
            (f.alice, "/v1/terms?set_id=\(f.set)&limit=50&\(t)", "another page size"),
            (f.alice, "/v1/terms?set_id=\(f.set)&limit=101&\(t)", "another page size"),
        ]
        let byDefault = try f.alice.call("GET", "/v1/terms?set_id=\(f.set)&\(t)")
        #expect(byDefault.status == 200, "the default page size (100) is the same binding as limit=100")
        for (who, path, why) in attempts {
            let response = try who.call("GET", path)
            #expect(response.status == 404, "\(why): \(response.text.prefix(200))")
            #expect(response.problemCode == "paging_token_not_found", "\(why)")
        }
    }

    @Test func malformedTokensAreNotFound() throws {
        let f = fixture
        var flipped = Array(f.token)
        flipped[10] = flipped[10] == "A" ? "B" : "A"
        var laterExpiry = Array(f.token)
        laterExpiry[2] = laterExpiry[2] == "z" ? "y" : "z"
        let wrongVersion = "B" + f.token.dropFirst()
        for token in [
            "", "abc", String(repeating: "A", count: 39), String(repeating: "*", count: 39), f.token + "A",
            String(flipped), String(laterExpiry), wrongVersion, "AWsC%2BJ8v",
        ] {
            let response = try f.page(f.alice, "set_id=\(f.set)&limit=100&paging_token=\(token)&page=2")
            #expect(response.status == 404, "token \(token): \(response.text)")
            #expect(response.problemCode == "paging_token_not_found")
        }
        let stranger = try TestHTTPClient(port: f.server.port).request(
            "GET", "/v1/terms?set_id=\(f.set)&limit=100&paging_token=junk&page=2",
            headers: [("Authorization", "Bearer " + String(repeating: "A", count: 43))])
        #expect(stranger.status == 401, "a bad bearer token wins over a bad paging token")
    }

    @Test func badPageNumbersAreRefused() throws {
        let f = fixture
        for page in ["0", "-1", "abc", "1.5", "", "2e3", "99999999999", "100000001", "+2"] {
            let response = try f.page(f.alice, "set_id=\(f.set)&limit=100&paging_token=\(f.token)&page=\(page)")
            #expect(response.status == 400, "page \(page): \(response.text)")
            #expect(response.problemCode == "invalid_query")
        }
        let past = try f.page(f.alice, "set_id=\(f.set)&limit=100&paging_token=\(f.token)&page=4")
        #expect(past.status == 400)
        #expect(past.problemCode == "invalid_query")
        let pastForBob = try f.page(f.bob, "set_id=\(f.set)&limit=100&paging_token=\(f.token)&page=4")
        #expect(pastForBob.status == 404, "only the owner learns how many pages there are")
        let noToken = try f.page(f.alice, "set_id=\(f.set)&limit=100&page=2")
        #expect(noToken.status == 400)
        let twice = try f.page(f.alice, "set_id=\(f.set)&limit=100&paging_token=\(f.token)&paging_token=\(f.token)")
        #expect(twice.status == 400)
    }

    @Test func rowsThatMoveOutOfTheFilterStillAppearOnce() throws {
        let f = fixture
        _ = try f.server.ownerQuery("UPDATE app.terms SET definition = 'same' WHERE set_id = $1::uuid", [f.set])
        let ids = try PagingSeed.orderedIDs(f.server, set: f.set)
        let first = try f.page(f.alice, "set_id=\(f.set)&definition=same&limit=100")
        let token = try #require(first.paging["token"] as? String)
        let mover = ids[150]
        let revision = try #require(Int(f.server.ownerQuery("SELECT revision FROM app.terms WHERE id = $1::uuid", [mover]).rows[0][0] ?? ""))
        let edit = try f.alice.call("PATCH", "/v1/terms/\(mover)", json: ["revision": revision, "definition": "moved"])
        try #require(edit.status == 200, "\(edit.text)")
        let second = try f.page(f.alice, "set_id=\(f.set)&definition=same&limit=100&paging_token=\(token)&page=2")
        #expect(second.status == 200)
        #expect(second.rows.map(\.id) == Array(ids[100..<200]))
        #expect(second.rows[50]["definition"] as? String == "moved", "the row in its current state")
        let fresh = try f.page(f.alice, "set_id=\(f.set)&definition=same&limit=100")
        #expect(fresh.paging["total"] as? Int == 249, "a new snapshot no longer has it")
    }
}

/// A user who loses access between pages gets no rows of what they can no longer read.
@Suite struct PagingAccessLossTests {
    @Test func revokedRowsAreOmittedNotLeaked() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try Pager(server: server, name: "alice")
        let bob = try Pager(server: server, name: "bob")
        let set = try alice.createSet()
        try PagingSeed.terms(server, set: set, count: 150)
        let added = try alice.call("POST", "/v1/set_collaborators", json: ["set_id": set, "user_id": bob.userID])
        try #require(added.status == 201, "\(added.text)")
        let first = try bob.call("GET", "/v1/terms?set_id=\(set)&limit=100")
        #expect(first.rows.count == 100)
        let token = try #require(first.paging["token"] as? String)
        let link = try #require(added.object["id"] as? String)
        let removed = try alice.call("DELETE", "/v1/set_collaborators/\(link)?revision=1")
        try #require(removed.status == 200, "\(removed.text)")
        let second = try bob.call("GET", "/v1/terms?set_id=\(set)&limit=100&paging_token=\(token)&page=2")
        #expect(second.status == 200)
        #expect(second.rows.isEmpty, "no row, no id, no tombstone of what bob can no longer read")
        #expect(second.paging["total"] as? Int == 150)
    }
}

/// `paging.token_ttl_seconds`: an expired token answers 410 to its owner.
@Suite struct PagingExpiryTests {
    @Test func expiredTokensAnswer410() throws {
        let server = try TestServer { $0.paging.tokenTTLSeconds = 1 }
        defer { server.stop() }
        let alice = try Pager(server: server, name: "alice")
        let bob = try Pager(server: server, name: "bob")
        let set = try alice.createSet()
        try PagingSeed.terms(server, set: set, count: 150)
        let first = try alice.call("GET", "/v1/terms?set_id=\(set)&limit=100")
        let token = try #require(first.paging["token"] as? String)
        let path = "/v1/terms?set_id=\(set)&limit=100&paging_token=\(token)&page=2"
        #expect(try alice.call("GET", path).status == 200)
        // A real sleep: the clock must pass the token's one-second lifetime.
        Thread.sleep(forTimeInterval: 2.2)
        let expired = try alice.call("GET", path)
        #expect(expired.status == 410, "\(expired.text)")
        #expect(expired.problemCode == "paging_token_expired")
        let strangers = try bob.call("GET", path)
        #expect(strangers.status == 404, "an expired token of someone else's is still not found")
        let otherFilter = try alice.call("GET", "/v1/terms?limit=100&paging_token=\(token)&page=2")
        #expect(otherFilter.status == 404)
    }

    /// The binding tag covers the expiry: a live token whose expiry was edited into the
    /// past is no token Ferry issued (404), where it answered 410 as if it had expired.
    @Test func aTokenWhoseExpiryWasEditedIsNotFound() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try Pager(server: server, name: "alice")
        let set = try alice.createSet()
        try PagingSeed.terms(server, set: set, count: 150)
        let first = try alice.call("GET", "/v1/terms?set_id=\(set)&limit=100")
        let token = try #require(first.paging["token"] as? String)
        var base64 = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        var bytes = try #require(Data(base64Encoded: base64).map(Array.init))
        bytes[1...4] = [0, 0, 0, 1]  // expired in 1970
        let edited = Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        let answer = try alice.call("GET", "/v1/terms?set_id=\(set)&limit=100&paging_token=\(edited)&page=2")
        #expect(answer.status == 404, "\(answer.text)")
        #expect(try alice.call("GET", "/v1/terms?set_id=\(set)&limit=100&paging_token=\(token)&page=2").status == 200)
    }
}
