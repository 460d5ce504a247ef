@testable import Ferry
import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Testing

/// Which pages of `GET /v1/changes` a shared cache may keep (API.md,
/// "Caching"), over the wire on one server: a public stream's plain poll is
/// the same for every reader (read as no user) and says so; every other page
/// is the caller's own and says `private, no-store`.
@Suite struct PublicPageTests {
    typealias World = SyncStreamTests.World

    static func page(_ w: World, _ path: String, _ auth: [(String, String)], headers: [(String, String)] = []) throws
        -> TestHTTPClient.Response
    {
        try w.client.request("GET", path, headers: auth + headers)
    }

    static func ids(_ page: TestHTTPClient.Response) -> [String] {
        (page.object["changes"] as? [[String: Any]] ?? []).compactMap { ($0["data"] as? [String: Any])?["id"] as? String }
    }

    @Test func aPublicStreamsPageIsEveryonesAndEveryOtherPageIsPrivate() throws {
        let w = try SyncStreamTests.world()
        defer { w.server.stop() }
        let open = try SyncStreamTests.set(w, public: true, terms: 2)
        let closed = try SyncStreamTests.set(w, public: false, terms: 1)
        _ = try w.feed("stream=set:\(open.id)", w.bob) { $0.count >= 3 }
        _ = try w.feed("stream=set:\(closed.id)", w.alice) { $0.count >= 2 }

        // The same bytes for Bob, Carol and Alice (the owner): one body, one tag.
        let path = "/v1/changes?limit=50&stream=set:\(open.id)"
        let pages = try [w.bob, w.carol, w.alice].map { try Self.page(w, path, $0) }
        for page in pages {
            #expect(page.status == 200)
            #expect(page.header("Cache-Control") == "public, max-age=1")
            #expect(page.header("Vary")?.contains("Authorization") == false, "\(page.headers)")
            #expect(Set(Self.ids(page)) == Set([open.id] + open.terms))
        }
        let tag = try #require(pages[0].header("ETag"))
        #expect(tag.hasPrefix("\"s"))
        // The frontier may move between them; when it did not, they are one answer.
        if pages.allSatisfy({ $0.object["cursor"] as? String == pages[0].object["cursor"] as? String }) {
            #expect(Set(pages.map(\.body)).count == 1)
            #expect(Set(pages.compactMap { $0.header("ETag") }).count == 1)
        }
        // Its tag in If-None-Match: 304, with the tag and the same Cache-Control.
        let again = try Self.page(w, path, w.carol, headers: [("If-None-Match", tag)])
        if again.status == 304 {
            #expect(again.header("ETag") == tag && again.header("Cache-Control") == "public, max-age=1")
        } else {
            // The frontier moved on: a new page, and a new tag.
            #expect(again.status == 200 && again.header("ETag") != tag)
        }
        // The "any activity since?" check works on it as on any page.
        let cursor = try #require(pages[0].object["cursor"] as? String)
        let since = try Self.page(w, path + "&since=\(cursor)", w.bob, headers: [("If-None-Match", "\"\(cursor)\"")])
        #expect(since.status == 304 || Self.ids(since).isEmpty, "\(since.status) \(since.text)")

        // Private: the default stream, a private set's stream (owner and
        // stranger), a long poll, an event-stream cursor, since=now.
        let privatePages = [
            try Self.page(w, "/v1/changes?limit=50", w.alice),
            try Self.page(w, "/v1/changes?limit=50&stream=set:\(closed.id)", w.alice),
            try Self.page(w, "/v1/changes?limit=50&stream=set:\(closed.id)", w.bob),
            try Self.page(w, "/v1/changes?limit=50&wait=1&stream=set:\(open.id)", w.bob),
            try Self.page(w, "/v1/changes?limit=50&stream=set:\(open.id)", w.bob, headers: [("Last-Event-ID", cursor)]),
            try Self.page(w, "/v1/changes?since=now&stream=set:\(open.id)", w.bob),
        ]
        for page in privatePages {
            #expect(page.status == 200 || page.status == 304)
            #expect(page.header("Cache-Control") == "private, no-store", "\(page.headers)")
        }
        #expect(Set(Self.ids(privatePages[1])) == Set([closed.id] + closed.terms))
        #expect(Self.ids(privatePages[2]).isEmpty)
    }

    /// A member of a public set reads its public page like anyone: their own
    /// member row is not in it, and it is in their default stream. When the
    /// set stopped being public after the cursor, the page is theirs again
    /// (private), so that it never revokes a row they still read.
    @Test func aMemberGetsThePublicPageAndTheirOwnRowsThroughTheDefaultStream() throws {
        let w = try SyncStreamTests.world()
        defer { w.server.stop() }
        let open = try SyncStreamTests.set(w, public: true, terms: 1)
        let member = try w.client.request("POST", "/v1/members", headers: w.alice, json: ["set_id": open.id, "user_id": w.carolID])
        try #require(member.status == 201, "\(member.text)")
        let memberID = try #require(member.object["id"] as? String)
        let stream = try w.feed("stream=set:\(open.id)", w.carol) { $0.count >= 2 }
        #expect(Set(stream.entries.map(\.1)) == Set([open.id] + open.terms), "the public page: \(stream.entries)")
        let own = try w.feed("", w.carol) { $0.contains { $0.1 == memberID } }
        #expect(own.entries.contains { $0.1 == memberID && !$0.2 }, "her member row: \(own.entries)")

        // Private and public again after her cursor.
        for (flag, revision) in [(false, 1), (true, 2)] {
            let flip = try w.client.request("PATCH", "/v1/sets/\(open.id)", headers: w.alice, json: ["is_public": flag, "revision": revision])
            try #require(flip.status == 200, "\(flip.text)")
        }
        let later = try w.feed("stream=set:\(open.id)", since: stream.cursor, w.carol) { $0.contains { $0.1 == open.id } }
        #expect(!later.entries.contains { $0.2 }, "nothing revoked from a member who still reads it: \(later.entries)")
        let page = try Self.page(w, "/v1/changes?limit=50&stream=set:\(open.id)&since=\(stream.cursor)", w.carol)
        #expect(page.header("Cache-Control") == "private, no-store")
        // A stranger's page from that cursor is theirs too: revoked stubs, then the rows again.
        let bob = try Self.page(w, "/v1/changes?limit=50&stream=set:\(open.id)&since=\(stream.cursor)", w.bob)
        #expect(bob.header("Cache-Control") == "private, no-store")
        // From a cursor after the flips, the page is everyone's again.
        let fresh = try w.feed("stream=set:\(open.id)", since: later.cursor, w.bob)
        let now = try Self.page(w, "/v1/changes?limit=50&stream=set:\(open.id)&since=\(fresh.cursor)", w.bob)
        #expect(now.header("Cache-Control") == "public, max-age=1", "\(now.headers)")
    }

    @Test func aRevokedEntryIsFoundHoweverPostgreSQLSpacesIt() {
        #expect(ChangesPlan.holdsRevoked(#"[{"data":{"id" : "1", "is_deleted" : true, "revoked" : true}}]"#))
        #expect(ChangesPlan.holdsRevoked(#"[{"data":{"id":"1","revoked":true}}]"#))
        #expect(!ChangesPlan.holdsRevoked(#"[{"data":{"id":"1","revoked":false,"word":"revoked"}}]"#))
        #expect(!ChangesPlan.holdsRevoked(""))
    }
}
