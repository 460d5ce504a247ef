@testable import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// Uploads in Ferry's bulk calls: fewer requests, the same guarantees.
extension SyncIntegrationTests {
    private func isBulk(_ request: TransportRequest, _ method: String, _ resource: String) -> Bool {
        request.method == method && request.path == "/v1/\(resource)" && request.body?.first == UInt8(ascii: "[")
    }

    @Test func editsOfManyRowsGoInBulkAndAConflictingItemIsMergedAlone() async throws {
        let (server, alice, a, b) = try await Self.twoDevices()
        defer { server.stop() }
        let set = try a.store.create("study_sets", ["title": .string("bulk")])
        var terms: [String] = []
        for index in 0..<30 {
            let rank = try a.store.rankAtEnd("terms", scope: .string(set))
            terms.append(try a.store.create("terms", ["set_id": .string(set), "word": .string("w\(index)"), "rank": .string(rank)]))
        }
        try await a.engine.sync()
        #expect(a.transport.delivered.filter { isBulk($0, "POST", "terms") }.count == 1, "30 creates, one call")
        #expect(a.transport.delivered.filter { $0.method == "POST" && $0.path == "/v1/terms" }.count == 1)

        // b changes one term's word; a, offline, changes every word.
        try await b.sync { try b.store.rows("terms").count == 30 }
        try b.store.update("terms", id: terms[5], ["word": .string("b's word")])
        try await b.engine.sync()
        for (index, id) in terms.enumerated() { try a.store.update("terms", id: id, ["word": .string("a\(index)")]) }
        let before = a.transport.delivered.count
        try await a.engine.sync()
        let patches = a.transport.delivered[before...].filter { $0.method == "PATCH" }
        #expect(patches.filter { isBulk($0, "PATCH", "terms") }.count == 2, "the refused call, then the 29 others again")
        #expect(patches.filter { $0.path == "/v1/terms/\(terms[5])" }.count == 2, "the conflicting row alone: 409, then merged")
        let event = await Self.nextEvent(a.engine)
        guard case .conflict(let resource, let id, let conflicts)? = event else {
            Issue.record("expected a conflict event, got \(String(describing: event))")
            return
        }
        #expect(resource == "terms" && id == terms[5] && conflicts.map(\.field) == ["word"])
        #expect(try a.store.pendingCount() == 0)
        let words = try await b.serverRows("terms", "set_id", set, token: alice.token).compactMap { $0["word"]?.string }
        #expect(Set(words) == Set((0..<30).map { "a\($0)" }), "every local edit landed; the conflict went the default way (local)")
    }

    @Test func aLostAnswerToABulkCallIsRetriedWithTheSameKeyAndNothingDoubles() async throws {
        let (server, alice, a, _) = try await Self.twoDevices()
        defer { server.stop() }
        let set = try a.store.create("study_sets", ["title": .string("lost")])
        try await a.engine.sync()
        for index in 0..<20 {
            let rank = try a.store.rankAtEnd("terms", scope: .string(set))
            try a.store.create("terms", ["set_id": .string(set), "word": .string("w\(index)"), "rank": .string(rank)])
        }
        a.transport.inject(.dropResponse) { $0.method == "POST" && $0.path == "/v1/terms" }
        await #expect(throws: TransportFailure.self) { try await a.engine.sync() }
        #expect(try a.store.pendingCount() == 20)
        try await a.engine.sync()
        let posts = a.transport.delivered.filter { isBulk($0, "POST", "terms") }
        #expect(posts.count == 2)
        #expect(Set(posts.map { $0.headers["Idempotency-Key"] }).count == 1, "the retry carried the same key")
        #expect(a.transport.answers.last { $0.headers["idempotent-replayed"] != nil } != nil, "the server replayed its answer")
        #expect(try a.store.pendingCount() == 0)
        #expect(try await a.serverRows("terms", "set_id", set, token: alice.token).count == 20)
        #expect(try a.store.rows("terms").allSatisfy { $0["revision"] == .int(1) }, "acknowledged rows carry the server's revision")
    }
}
