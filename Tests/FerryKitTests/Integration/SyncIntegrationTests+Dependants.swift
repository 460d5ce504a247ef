@testable import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// A refused create blocks only what depends on it.
extension SyncIntegrationTests {
    @Test func childrenOfARefusedCreateAreRefusedWithoutARequestAndTheRestLands() async throws {
        let (server, _, a, b) = try await Self.twoDevices()
        defer { server.stop() }
        let poison = try a.store.create("study_sets", ["title": .string(String(repeating: "x", count: 600))])
        var children: [String] = []
        for word in ["a", "b", "c"] {
            children.append(try a.store.create("terms", ["set_id": .string(poison), "word": .string(word), "rank": .string("U" + word)]))
        }
        let folder = try a.store.create("folders", ["name": .string("f")])
        let link = try a.store.create("folder_sets", ["folder_id": .string(folder), "set_id": .string(poison)])
        let good = try a.store.create("study_sets", ["title": .string("fine")])
        let goodTerm = try a.store.create("terms", ["set_id": .string(good), "word": .string("ok"), "rank": .string("U")])
        try await a.engine.sync()

        let termWrites = a.transport.delivered.filter { $0.path.hasPrefix("/v1/terms") && $0.method != "GET" }
        let bodies = termWrites.compactMap { $0.body.map { String(decoding: $0, as: UTF8.self) } }
        #expect(!bodies.contains { $0.contains(poison) }, "no child of the refused set was sent")
        #expect(!a.transport.delivered.contains { $0.path.hasPrefix("/v1/folder_sets") && $0.method != "GET" })
        #expect(try a.store.pendingCount() == 0)
        #expect(try a.store.rejectedCount() == 5, "the set, its three terms, the link")
        for id in children { #expect(try a.store.row("terms", id: id) == nil && a.store.state("terms", id: id) == .rejected) }
        #expect(try a.store.row("folder_sets", id: link) == nil)
        #expect(try a.store.row("folders", id: folder) != nil, "the folder does not depend on the set")

        var refused: [String: Int] = [:]
        for _ in 0..<5 {
            guard case .rejected(_, let id, let status, let problem)? = await Self.nextEvent(a.engine) else { break }
            refused[id] = status
            if status == 424 { #expect((try? JSONValue.decode(problem))?.object?["code"] == .string("parent_rejected")) }
        }
        #expect(refused[poison] == 422)
        #expect(Set(children + [link]).allSatisfy { refused[$0] == 424 }, "\(refused)")
        try await b.sync { try b.store.row("terms", id: goodTerm) != nil && b.store.row("folders", id: folder) != nil }
    }
}
