import Ferry
import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Testing

/// A former member's stream of the set they left (issue 46: a stream the
/// user may not read answers exactly as one that does not exist).
extension SyncStreamTests {
    @Test func aFormerMemberAskingForTheStreamFromTheStartGetsWhatANonexistentStreamGets() throws {
        let w = try Self.world()
        defer { w.server.stop() }
        let shared = try Self.set(w, public: false, terms: 1)
        let member = try w.client.request("POST", "/v1/members", headers: w.alice, json: ["set_id": shared.id, "user_id": w.carolID])
        try #require(member.status == 201, "\(member.text)")
        let memberID = try #require(member.object["id"] as? String)
        _ = try w.feed("stream=set:\(shared.id)", w.carol) { $0.count >= 3 }
        let removal = try w.client.request("DELETE", "/v1/members/\(memberID)?revision=1", headers: w.alice)
        try #require(removal.status < 300, "\(removal.text)")
        // Once the removal is in the feed (her default stream revokes the set), ...
        _ = try w.feed("", w.carol) { entries in entries.contains { $0.1 == shared.id && $0.2 } }
        // ... her stream of the set from the start is the page of a set that does not exist.
        let unknown = UUID().uuidString.lowercased()
        func page(_ id: String) throws -> (status: Int, changes: [[String: Any]], more: Bool?) {
            let answer = try w.get("/v1/changes?stream=set:\(id)", w.carol)
            return (answer.status, answer.object["changes"] as? [[String: Any]] ?? [["missing": answer.text]], answer.object["has_more"] as? Bool)
        }
        let former = try page(shared.id)
        let missing = try page(unknown)
        #expect(missing.status == 200 && missing.changes.isEmpty && missing.more == false)
        #expect(former.status == missing.status && former.more == missing.more)
        #expect(former.changes.isEmpty, "\(former.changes)")
    }
}
