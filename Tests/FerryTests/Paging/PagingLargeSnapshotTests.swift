import FerryTestSupport
import Foundation
import Testing

/// A result far larger than one memcached item.
@Suite struct PagingLargeSnapshotTests {
    @Test func threeHundredThousandRows() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try Pager(server: server, name: "alice")
        let set = try alice.createSet()
        try PagingSeed.terms(server, set: set, count: 300_000)
        let ids = try PagingSeed.orderedIDs(server, set: set)
        try #require(ids.count == 300_000)
        let first = try alice.call("GET", "/v1/terms?set_id=\(set)&limit=1000")
        try #require(first.status == 200, "\(first.text.prefix(300))")
        #expect(first.paging["total"] as? Int == 300_000)
        #expect(first.paging["pages"] as? Int == 300)
        #expect(first.rows.map(\.id) == Array(ids[0..<1000]))
        let token = try #require(first.paging["token"] as? String)
        // Page 17 straddles the first chunk boundary (16,384 ids); 300 is the last.
        for page in [2, 17, 33, 150, 299, 300] {
            let response = try alice.call("GET", "/v1/terms?set_id=\(set)&limit=1000&paging_token=\(token)&page=\(page)")
            #expect(response.status == 200)
            let start = (page - 1) * 1000
            #expect(response.rows.map(\.id) == Array(ids[start..<min(start + 1000, ids.count)]), "page \(page)")
        }
    }
}
