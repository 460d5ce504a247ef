@testable import FerryKit
import Foundation
import GRDB
import Testing
@testable import FerryKitTestSupport

/// The store without a server: writes, the outbox they record, schema growth.
@Suite struct StoreTests {
    func store() throws -> FerryStore {
        let store = try FerryStore(path: ":memory:")
        try store.apply(schema: ExampleSchema.schema)
        return store
    }

    @Test func aWriteRecordsItsOperationAndDirtyFieldsInTheSameTransaction() throws {
        let store = try store()
        let id = try store.create("study_sets", ["title": .string("Spanish")])
        try store.update("study_sets", id: id, ["description": .string("verbs")])
        #expect(try store.row("study_sets", id: id)?["description"] == .string("verbs"))
        #expect(try store.pendingCount() == 2)
        #expect(try store.state("study_sets", id: id) == .dirty)
        let input = try store.uploadInput()
        #expect(input.operations.map(\.kind) == [.create, .update])
        #expect(input.operations[1].fields == ["description"])
        #expect(Set(input.operations.map(\.opID)).count == 2)
        // A write that fails leaves neither the row nor an operation.
        #expect(throws: FerryKitError.self) { try store.update("study_sets", id: "nope", ["title": .string("x")]) }
        #expect(try store.pendingCount() == 2)
    }

    @Test func aServerSchemaThatGrowsKeepsEveryUnsyncedRow() throws {
        let store = try store()
        let set = try store.create("study_sets", ["title": .string("kept")])
        let term = try store.create("terms", ["set_id": .string(set), "word": .string("hola"), "rank": .string("U")])
        var resources = ExampleSchema.schema.resources
        let grown = ServerSchema.Resource(
            name: "terms", columns: ExampleSchema.terms.columns + [.init(name: "audio_url", type: "text")],
            ranked: true, rankScope: "set_id")
        resources[resources.firstIndex { $0.name == "terms" }!] = grown
        resources.append(ServerSchema.Resource(name: "tags", columns: [ExampleSchema.id, .init(name: "label", type: "text")] + ExampleSchema.sync))
        // The server also dropped study_sets.description: the local column stays.
        let sets = ServerSchema.Resource(name: "study_sets", columns: ExampleSchema.studySets.columns.filter { $0.name != "description" })
        resources[resources.firstIndex { $0.name == "study_sets" }!] = sets
        try store.apply(schema: ServerSchema(resources: resources))
        #expect(try store.row("terms", id: term)?["word"] == .string("hola"))
        #expect(try store.row("study_sets", id: set)?["title"] == .string("kept"))
        #expect(try store.pendingCount() == 2)
        try store.update("terms", id: term, ["audio_url": .string("a.mp3")])
        #expect(try store.row("terms", id: term)?["audio_url"] == .string("a.mp3"))
        let tags = try store.create("tags", ["label": .string("new")])
        #expect(try store.rows("tags").map { $0["id"] } == [.string(tags)])
        let columns = try store.database.read { db in try db.columns(in: "study_sets").map(\.name) }
        #expect(columns.contains("description"))
    }

    @Test func signingOutWithUnsyncedChangesSaysHowManyAndKeepsThem() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ferrykit-\(UUID()).sqlite").path
        do {
            let store = try FerryStore(path: path)
            try store.apply(schema: ExampleSchema.schema)
            try store.create("folders", ["name": .string("a")])
            try store.create("folders", ["name": .string("b")])
        }
        #expect(try FerryStore.signOut(path: path) == 2)
        #expect(FileManager.default.fileExists(atPath: path))
        #expect(try FerryStore(path: path).pendingCount() == 2)
        #expect(try FerryStore.signOut(path: path, discardingUnsynced: true) == 2)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func movesComputeARankBetweenTheNewNeighbours() throws {
        let store = try store()
        let set = try store.create("study_sets", ["title": .string("s")])
        var ids: [String] = []
        for word in ["a", "b", "c"] {
            ids.append(
                try store.create(
                    "terms",
                    [
                        "set_id": .string(set), "word": .string(word),
                        "rank": .string(try store.rankAtEnd("terms", scope: .string(set))),
                    ]))
        }
        try store.move("terms", id: ids[2], after: ids[0])
        #expect(try store.rows("terms", where: "set_id", equals: .string(set)).map { $0["word"] } == [.string("a"), .string("c"), .string("b")])
        try store.move("terms", id: ids[1], after: nil)
        #expect(try store.rows("terms", where: "set_id", equals: .string(set)).map { $0["word"] } == [.string("b"), .string("a"), .string("c")])
    }

    /// Two devices that each appended offline hold two terms with the same rank;
    /// a move next to them must still find a key (found by the simulation).
    @Test func aMoveNextToEqualRanksGoesAfterTheTie() throws {
        let store = try store()
        let set = try store.create("study_sets", ["title": .string("s")])
        let first = try store.create("terms", ["set_id": .string(set), "word": .string("first"), "rank": .string("U")])
        let tied = ["t1", "t2"].map { word in
            try! store.create("terms", ["set_id": .string(set), "word": .string(word), "rank": .string("V")])
        }
        let last = try store.create("terms", ["set_id": .string(set), "word": .string("last"), "rank": .string("W")])
        try store.move("terms", id: first, after: tied[0])
        let words = try store.rows("terms", where: "set_id", equals: .string(set)).compactMap { $0["word"]?.string }
        #expect(Set(words.prefix(2)) == ["t1", "t2"] && words.suffix(2) == ["first", "last"], "ties order by id: \(words)")
        #expect(try store.row("terms", id: last)?["rank"] == .string("W"), "no other row changed")
    }
}
