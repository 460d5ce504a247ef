import FerryTestSupport
import Foundation
import Testing

/// The seed scenario: pages never shift and never skip while others write.
@Suite struct PagingSeedScenarioTests {
    @Test func pagesSurviveInsertsDeletesAndEdits() throws {
        let server = try TestServer()
        defer { server.stop() }
        let reader = try Pager(server: server, name: "reader")
        let writer = reader.on(server.client())  // the same user on another device
        let set = try reader.createSet()
        try PagingSeed.terms(server, set: set, count: 1000)
        let snapshot = try PagingSeed.orderedIDs(server, set: set)
        try #require(snapshot.count == 1000)

        var page = try reader.call("GET", "/v1/terms?set_id=\(set)&limit=100")
        try #require(page.status == 200, "\(page.text)")
        let token = try #require(page.paging["token"] as? String)
        #expect(page.paging["page"] as? Int == 1)
        #expect(page.paging["pages"] as? Int == 10)
        #expect(page.paging["total"] as? Int == 1000)
        let next = try #require(page.nextLink)
        #expect(next.contains("paging_token=\(token)") && next.contains("page=2") && next.contains("set_id=\(set)"))
        #expect(page.header("Link") == "<\(next)>; rel=\"next\"")

        var inserted: Set<String> = []
        var deleted: Set<String> = []
        var edited: [String: String] = [:]
        var seen: [[String: Any]] = page.rows
        var pageNumber = 1
        while let link = page.nextLink {
            switch pageNumber {
            case 1:  // 50 inserts spread over the whole order, most of them not reached yet.
                let items = (0..<50).map { k -> [String: Any] in
                    ["set_id": set, "word": "new\(k)", "rank": "r" + String(format: "%07d", 5 + k * 19) + "X"]
                }
                let created = try writer.call("POST", "/v1/terms", json: items)
                try #require(created.status == 201, "\(created.text)")
                inserted = Set((created.json as? [[String: Any]] ?? []).map(\.id))
            case 2:  // 30 deletes the reader has not reached (positions 300...).
                let victims = (0..<30).map { snapshot[300 + $0 * 23] }
                let response = try writer.call("DELETE", "/v1/terms", json: victims.map { ["id": $0, "revision": 1] })
                try #require(response.status == 200, "\(response.text)")
                deleted = Set(victims)
            case 3:  // 20 edits, not deleted ones, not reached yet.
                let targets = (0..<20).map { snapshot[401 + $0 * 29] }.filter { !deleted.contains($0) }
                for id in targets { edited[id] = "edited-\(id.prefix(8))" }
                let response = try writer.call(
                    "PATCH", "/v1/terms", json: targets.map { ["id": $0, "revision": 1, "word": edited[$0]!] })
                try #require(response.status == 200, "\(response.text)")
            default: break
            }
            page = try reader.call("GET", link)
            try #require(page.status == 200, "\(page.text)")
            pageNumber += 1
            #expect(page.paging["page"] as? Int == pageNumber)
            #expect(page.paging["token"] as? String == token)
            #expect(page.paging["total"] as? Int == 1000)
            #expect(page.rows.count == 100)
            seen += page.rows
        }
        #expect(pageNumber == 10)
        #expect(edited.count >= 18)
        #expect(inserted.count == 50)
        #expect(deleted.count == 30)

        let ids = seen.map(\.id)
        #expect(ids == snapshot, "every snapshotted row exactly once, in the snapshot's order")
        #expect(Set(ids).isDisjoint(with: inserted), "no row created after the snapshot")
        for row in seen {
            let id = row.id
            if deleted.contains(id) {
                #expect(row["is_deleted"] as? Bool == true)
                #expect(row.revision == 2)
                #expect(row["word"] == nil, "a tombstone is the short form")
            } else if let word = edited[id] {
                #expect(row["word"] as? String == word, "rows come back in their current state")
                #expect(row.revision == 2)
            } else {
                #expect(row["is_deleted"] as? Bool == false)
                #expect(row.revision == 1)
            }
        }

        // The next sync's first page sees the new state: inserts in, deletes out.
        let fresh = try reader.call("GET", "/v1/terms?set_id=\(set)&limit=100")
        #expect(fresh.paging["total"] as? Int == 1000 + 50 - 30)
        #expect(fresh.paging["token"] as? String != token)
    }
}
