import Ferry
import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Testing

/// `GET /v1/<r>?public=false`: the Index of the rows the caller reads
/// privately, as the default stream holds them (FerryKit's initial sync asks
/// so, so that a public set reaches a device only by subscription).
extension SyncStreamTests {
    @Test func anIndexWithPublicFalseLeavesOutRowsReadOnlyBecausePublic() throws {
        let w = try Self.world()
        defer { w.server.stop() }
        let open = try Self.set(w, public: true, terms: 2)
        let closed = try Self.set(w, public: false, terms: 1)
        func ids(_ path: String, _ auth: [(String, String)]) throws -> Set<String> {
            let page = try w.get(path, auth)
            try #require(page.status == 200, "\(path): \(page.text.prefix(300))")
            return Set((page.object["data"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String })
        }
        // Bob browses the public set by default, and holds nothing of it privately.
        #expect(try ids("/v1/sets", w.bob) == [open.id])
        #expect(try ids("/v1/terms?order=id", w.bob) == Set(open.terms))
        #expect(try ids("/v1/sets?public=false", w.bob).isEmpty)
        #expect(try ids("/v1/terms?public=false&order=id", w.bob).isEmpty)
        // Paged: the next link keeps public=false, and no page brings a public row.
        #expect(try ids("/v1/terms?public=false&limit=1", w.bob).isEmpty)
        let paged = try w.get("/v1/terms?public=true&limit=1&order=id", w.bob)
        #expect(((paged.object["paging"] as? [String: Any])?["next"] as? String)?.contains("public=true") == true, "\(paged.text)")
        // The owner reads both of hers either way.
        #expect(try ids("/v1/sets?public=false", w.alice) == [open.id, closed.id])
        // Anything but true or false is refused, naming the parameter.
        let bad = try w.get("/v1/sets?public=no", w.bob)
        #expect(bad.status == 400 && bad.text.contains("public"), "\(bad.text)")
    }
}
