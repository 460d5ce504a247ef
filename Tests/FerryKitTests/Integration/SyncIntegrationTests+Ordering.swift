@testable import FerryKit
import FerryTestSupport
import Foundation
import Testing

extension SyncIntegrationTests {
    @Test func aReorderOnTwoDevicesEndsInTheSameOrderOnBoth() async throws {
        let (server, _, a, b) = try await Self.twoDevices()
        defer { server.stop() }
        let set = try a.store.create("study_sets", ["title": .string("order")])
        var ids: [String: String] = [:]
        for word in ["a", "b", "c", "d"] {
            ids[word] = try a.store.create(
                "terms",
                [
                    "set_id": .string(set), "word": .string(word),
                    "rank": .string(try a.store.rankAtEnd("terms", scope: .string(set))),
                ])
        }
        let words = { (device: Device) in try device.store.rows("terms", where: "set_id", equals: .string(set)).compactMap { $0["word"]?.string } }
        try await a.engine.sync()
        try await b.sync { try words(b).count == 4 }
        try a.store.move("terms", id: ids["d"]!, after: nil)  // d first
        try b.store.move("terms", id: ids["a"]!, after: ids["c"]!)  // a after c
        try await a.engine.sync()
        try await b.sync { try words(b) == ["d", "b", "c", "a"] }
        try await a.sync { try words(a) == ["d", "b", "c", "a"] }
        #expect(try words(b) == words(a))
    }
}
