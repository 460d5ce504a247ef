import Ferry
import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Testing

/// The operator's row browser (past Row Level Security, tombstones
/// included, paged through snapshots) and a row's history.
@Suite struct ConsoleRowsTests {
    @Test func browsingPagesThroughASnapshotWithTombstones() throws {
        let fixture = try ConsoleFixture()
        defer { fixture.stop() }
        let owner = try fixture.server.user("gina")
        let set = try fixture.server.makeSet(for: owner.id)
        let terms = try fixture.server.makeTerms(in: set, count: 120)
        _ = try fixture.server.ownerQuery("DELETE FROM app.terms WHERE id = ANY($1::uuid[])", ["{\(terms[0]),\(terms[1])}"])

        var seen: [String] = []
        var deleted = 0
        let first = try fixture.console("GET", "/resources/terms/rows?set_id=\(set)&limit=50").object
        var paging = try #require(first["paging"] as? [String: Any])
        #expect(paging["total"] as? Int == 120 && paging["pages"] as? Int == 3)
        let token = try #require(paging["token"] as? String)
        var page = first
        // A row added meanwhile is not in the snapshot; a row deleted meanwhile comes back as its tombstone.
        _ = try fixture.server.makeTerms(in: set, count: 1)
        let onPage1 = Set((first["data"] as? [[String: Any]] ?? []).compactMap { ($0["row"] as? [String: Any])?["id"] as? String })
        let later = try #require(terms.first { !onPage1.contains($0) && $0 != terms[0] && $0 != terms[1] })
        _ = try fixture.server.ownerQuery("DELETE FROM app.terms WHERE id = $1", [later])
        for number in 1...3 {
            if number > 1 {
                page = try fixture.console("GET", "/resources/terms/rows?set_id=\(set)&limit=50&paging_token=\(token)&page=\(number)").object
                paging = page["paging"] as? [String: Any] ?? [:]
                #expect(paging["page"] as? Int == number)
            }
            for item in page["data"] as? [[String: Any]] ?? [] {
                let row = item["row"] as? [String: Any] ?? [:]
                seen.append(row["id"] as? String ?? "")
                if row["is_deleted"] as? Bool == true {
                    deleted += 1
                    #expect(row["word"] != nil, "a tombstone is shown whole")
                }
                #expect(item["xid"] is String)
            }
        }
        #expect(seen.count == 120 && Set(seen) == Set(terms))
        #expect(deleted == 3)
        let live = try fixture.console("GET", "/resources/terms/rows?set_id=\(set)&deleted=live&limit=200").object
        #expect((live["paging"] as? [String: Any])?["total"] as? Int == 118)
        let tombstones = try fixture.console("GET", "/resources/terms/rows?deleted=deleted").object
        #expect((tombstones["paging"] as? [String: Any])?["total"] as? Int == 3)

        // The snapshot is the operator's: another operator's token does not read it.
        let other = try fixture.console(
            "GET", "/resources/terms/rows?set_id=\(set)&limit=50&paging_token=\(token)&page=2",
            token: fixture.viewer)
        #expect(other.status == 404 && other.object["code"] as? String == "paging_token_not_found")
        // Nor does a user's Index.
        #expect(try fixture.app("GET", "/v1/terms?set_id=\(set)&limit=50&paging_token=\(token)&page=2", token: owner.token).status == 404)
    }

    @Test func filtersAreCheckedAndTheWriterIsOne() throws {
        let fixture = try ConsoleFixture()
        defer { fixture.stop() }
        let story = try fixture.revokedCollaborator()
        let byWriter = try fixture.console("GET", "/resources/terms/rows?writer=\(story.owner.id)").object
        #expect((byWriter["paging"] as? [String: Any])?["total"] as? Int == 3)
        let byOther = try fixture.console("GET", "/resources/terms/rows?writer=\(story.friend.id)").object
        #expect((byOther["paging"] as? [String: Any])?["total"] as? Int == 0)
        let ordered = try fixture.console("GET", "/resources/terms/rows?order=word.desc").object["data"] as? [[String: Any]] ?? []
        #expect(ordered.compactMap { ($0["row"] as? [String: Any])?["word"] as? String } == ["ser", "ir", "estar"])
        for bad in [
            "set_id=nope", "nope=1", "order=nope", "deleted=maybe", "limit=0", "limit=201", "writer=x", "is_deleted=yes",
            "page=2", "set_id=\(story.set)&set_id=\(story.set)",
        ] {
            let response = try fixture.console("GET", "/resources/terms/rows?\(bad)")
            #expect(response.status == 400, "\(bad): \(response.status) \(response.text)")
        }
        #expect(try fixture.console("GET", "/resources/nope/rows").status == 404)
    }

    /// A row's history: revision, last writer, the last change's transaction,
    /// the revision each field last changed at, and the access log naming it.
    @Test func aRowsHistoryNamesItsLastWriter() throws {
        let fixture = try ConsoleFixture()
        defer { fixture.stop() }
        let story = try fixture.revokedCollaborator()
        let term = story.terms[0]
        // Delivered once the feed's frontier has passed the row's transaction: at once on a quiet
        // cluster, a moment later on a busy one (a transaction that ends between the frontier's
        // snapshot and its look at the backends still holds it, core 0023), so wait for the state.
        var created: [String: Any] = [:]
        try waitUntil("the created term is below the feed's frontier") {
            created = try fixture.console("GET", "/resources/terms/rows/\(term)").object["history"] as? [String: Any] ?? [:]
            return created["delivered"] as? Bool == true
        }
        #expect(created["writer"] as? String == story.owner.id)
        #expect(created["writer_name"] as? String == "gina")
        _ = try fixture.app("PATCH", "/v1/terms/\(term)", token: story.owner.token, json: ["revision": 1, "definition": "to be"])
        _ = try fixture.server.ownerQuery("UPDATE app.terms SET word = 'SER' WHERE id = $1", [term])
        let history = try fixture.console("GET", "/resources/terms/rows/\(term)").object["history"] as? [String: Any] ?? [:]
        let row = history["row"] as? [String: Any] ?? [:]
        #expect(row["revision"] as? Int == 3 && row["word"] as? String == "SER")
        #expect(history["writer"] is NSNull, "a write from psql has no Ferry writer")
        let fields = history["field_revisions"] as? [String: Any] ?? [:]
        #expect(fields["definition"] as? Int == 2 && fields["word"] as? Int == 3)
        let xid = try #require(history["xid"] as? String)
        #expect(try fixture.server.ownerQuery("SELECT _ferry_xid::text FROM app.terms WHERE id = $1", [term]).rows[0][0] == xid)

        let set = try fixture.console("GET", "/resources/study_sets/rows/\(story.set)").object["history"] as? [String: Any] ?? [:]
        let revocations = set["revocations"] as? [[String: Any]] ?? []
        #expect(revocations.first?["user_name"] as? String == "hank")
        #expect((set["grants"] as? [[String: Any]] ?? []).first?["user_name"] as? String == "hank")
        #expect(try fixture.console("GET", "/resources/terms/rows/\(story.set)").status == 404)
        #expect(try fixture.console("GET", "/resources/terms/rows/not-a-uuid").status == 404)
    }
}
