@testable import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// App-declared write groups: one `/v1/batch`, applied all together or not at all.
extension SyncIntegrationTests {
    private func batches(_ device: Device) -> [TransportRequest] {
        device.transport.delivered.filter { $0.method == "POST" && $0.path == "/v1/batch" }
    }

    @Test func aWriteGroupGoesAsOneBatchAndALostAnswerIsReplayedNotDoubled() async throws {
        let (server, alice, a, b) = try await Self.twoDevices()
        defer { server.stop() }
        let (set, terms) = try a.store.write { tx in
            let set = try tx.create("study_sets", ["title": .string("together")])
            var terms: [String] = []
            for word in ["uno", "dos", "tres"] {
                terms.append(
                    try tx.create(
                        "terms",
                        [
                            "set_id": .string(set), "word": .string(word),
                            "rank": .string(try tx.rankAtEnd("terms", scope: .string(set))),
                        ]))
            }
            return (set, terms)
        }
        let apart = try a.store.create("study_sets", ["title": .string("apart")])
        a.transport.inject(.dropResponse) { $0.path == "/v1/batch" }
        await #expect(throws: TransportFailure.self) { try await a.engine.sync() }
        try await a.engine.sync()
        let sent = batches(a)
        #expect(sent.count == 2, "the lost answer, then the retry")
        #expect(Set(sent.map(\.headers["Idempotency-Key"])).count == 1, "the retry carries the same key")
        let operations = sent.first.flatMap { $0.body }.flatMap { try? JSONValue.decode($0) }?.object?["operations"]?.array
        #expect(operations?.count == 4, "the set and its three terms")
        #expect(operations?.first?.object?["path"] == .string("/v1/study_sets"), "the parent first")
        #expect(!a.transport.delivered.contains { $0.path == "/v1/terms" }, "no term went outside the batch")
        #expect(try a.store.pendingCount() == 0)
        let onServer = try await b.serverRows("terms", "set_id", set, token: alice.token)
        #expect(Set(onServer.compactMap { $0["id"]?.string }) == Set(terms), "each term once")
        try await b.sync { try b.store.row("study_sets", id: apart) != nil && b.store.rows("terms").count == 3 }
    }

    @Test func aGroupTheServerRefusesIsRefusedWholeAndRollsBackWhole() async throws {
        let (server, alice, a, b) = try await Self.twoDevices()
        defer { server.stop() }
        let (set, term) = try a.store.write { tx in
            let set = try tx.create("study_sets", ["title": .string("half valid")])
            let term = try tx.create("terms", ["set_id": .string(set), "word": .string("w"), "rank": .string("not a rank!")])
            return (set, term)
        }
        try await a.engine.sync()
        #expect(try a.store.row("study_sets", id: set) == nil && a.store.row("terms", id: term) == nil)
        #expect(try a.store.rejectedCount() == 2 && a.store.pendingCount() == 0)
        var rejected: Set<String> = []
        for _ in 0..<2 {
            if case .rejected(_, let id, let status, _)? = await Self.nextEvent(a.engine) {
                #expect(status == 422)
                rejected.insert(id)
            }
        }
        #expect(rejected == [set, term], "an event for each row of the group")
        let sets = try await b.serverRows("study_sets", "id", set, token: alice.token)
        #expect(sets.isEmpty, "the valid half did not land alone")
    }

    @Test func aConflictInsideAGroupIsMergedAndTheGroupSentAgain() async throws {
        let (server, alice, a, b) = try await Self.twoDevices()
        defer { server.stop() }
        let set = try a.store.create("study_sets", ["title": .string("T"), "description": .string("D")])
        try await a.engine.sync()
        try await b.sync { try b.store.row("study_sets", id: set) != nil }
        try b.store.update("study_sets", id: set, ["title": .string("from b"), "description": .string("from b")])
        try await b.engine.sync()
        let term = try a.store.write { tx in
            try tx.update("study_sets", id: set, ["title": .string("from a")])
            return try tx.create("terms", ["set_id": .string(set), "word": .string("w"), "rank": .string("U")])
        }
        try await a.engine.sync()
        #expect(batches(a).count == 2, "409 on the set, merged, the group again")
        #expect(try a.store.pendingCount() == 0)
        let row = try #require(try await b.serverRows("study_sets", "id", set, token: alice.token).first)
        #expect(
            row["title"] == .string("from a") && row["description"] == .string("from b"),
            "the field both changed went the default way (local), the other kept")
        guard case .conflict(_, let id, let conflicts)? = await Self.nextEvent(a.engine) else {
            Issue.record("expected a conflict event")
            return
        }
        #expect(id == set && conflicts.map(\.field) == ["title"])
        #expect(try await b.serverRows("terms", "set_id", set, token: alice.token).compactMap { $0["id"]?.string } == [term])
    }
}
