@testable import FerryKit
import Foundation
import GRDB
import Testing
@testable import FerryKitTestSupport

/// Typed records over the store, without a server: the same outbox, checks
/// and order as the dictionary calls, and GRDB's own reads on top.
@Suite struct RecordTests {
    func store() throws -> FerryStore {
        let store = try FerryStore(path: ":memory:")
        try store.apply(schema: ExampleSchema.withScores)
        return store
    }

    @Test func insertRecordsTheCreateWithTheFieldsSetAndRanksANewTermLast() throws {
        let store = try store()
        let set = try store.insert(TestSet(title: "Spanish"))
        #expect(set.creatorID == nil && set.revision == nil, "the server fills these on upload")
        let first = try store.insert(TestTerm(setID: set.id, word: "hola"))
        let second = try store.insert(TestTerm(setID: set.id, word: "adios"))
        #expect(first.rank != nil && second.rank! > first.rank!, "nil rank: placed last")
        let input = try store.uploadInput()
        #expect(input.operations.map(\.kind) == [.create, .create, .create])
        #expect(input.operations[1].fields == ["set_id", "word", "rank"])
        #expect(try store.fetch(TestTerm.self, where: Column("set_id") == set.id).map(\.word) == ["hola", "adios"])
    }

    @Test func updateWritesOnlyTheFieldsThatDifferAndTheClosureOnlyWhatItChanged() throws {
        let store = try store()
        _ = try store.applyPage(
            [
                (
                    "study_sets",
                    [
                        "id": .string("00000000-0000-4000-8000-000000000001"), "title": .string("T"),
                        "description": .string("D"), "revision": .int(1), "creator_id": .string("u"),
                    ]
                )
            ],
            cursor: nil
        ) { _ in nil }
        var set = try #require(try store.fetch(TestSet.self, id: "00000000-0000-4000-8000-000000000001"))
        set.title = "mine"
        try store.update(set)
        #expect(try store.uploadInput().operations.last?.fields == ["title"])
        let changed = try store.update(set) { $0.description = "new" }
        #expect(changed.description == "new" && changed.title == "mine")
        #expect(try store.uploadInput().operations.map(\.fields) == [["title"], ["description"]])
        // A stale copy that leaves a column set at creation nil does not touch it.
        var stale = set
        stale.creatorID = nil
        try store.update(stale)
        #expect(try store.fetch(TestSet.self, id: set.id)?.creatorID == "u")
        var moved = set
        moved.creatorID = "someone else"
        #expect(throws: FerryKitError.readOnlyColumn(resource: "study_sets", column: "creator_id")) { try store.update(moved) }
    }

    @Test func deleteAndMoveGoThroughTheOutboxToo() throws {
        let store = try store()
        let set = try store.insert(TestSet(title: "s"))
        let terms = try ["a", "b", "c"].map { try store.insert(TestTerm(setID: set.id, word: $0)) }
        try store.move(terms[2], after: nil)
        #expect(try store.fetch(TestTerm.self).compactMap(\.word) == ["c", "a", "b"])
        try store.delete(terms[0])
        #expect(try store.fetch(TestTerm.self).compactMap(\.word) == ["c", "b"])
        // Created and deleted before any upload: nothing to send for it.
        let plan = UploadPlanner.plan(
            try store.uploadInput().operations, schema: ExampleSchema.withScores,
            rows: try store.uploadInput().rows, bases: try store.uploadInput().bases)
        #expect(!plan.contains { $0.rowID == terms[0].id.rowID })
    }

    @Test func typesRoundTripBooleansArraysAndJSON() throws {
        let store = try store()
        let score = try store.insert(TestScore(player: "p", points: 7, final: true, tags: ["x", "y"], extra: .object(["k": .int(1)])))
        #expect(try store.fetch(TestScore.self, id: score.id) == score)
        let row = try #require(try store.row("scores", id: score.id.rowID))
        #expect(row["final"] == .bool(true) && row["tags"] == .array([.string("x"), .string("y")]) && row["extra"] == .object(["k": .int(1)]))
        let request = try #require(
            UploadPlanner.plan(
                try store.uploadInput().operations, schema: ExampleSchema.withScores,
                rows: try store.uploadInput().rows, bases: try store.uploadInput().bases
            ).first)
        #expect(request.body?["final"] == .bool(true) && request.body?["points"] == .int(7))
    }

    @Test func recordsAreGRDBRecordsQueriesAndJoinsIncluded() throws {
        let store = try store()
        let set = try store.insert(TestSet(title: "s"))
        try store.insert(TestTerm(setID: set.id, word: "hola"))
        struct TermWithSet: FetchableRecord, Decodable { var term: TestTerm; var set: TestSet }
        let joined = try store.database.read { db in
            try TestTerm.including(required: TestTerm.set.forKey("set")).asRequest(of: TermWithSet.self).fetchAll(db)
        }
        #expect(joined.map(\.set.title) == ["s"] && joined.map(\.term.word) == ["hola"])
        #expect(try store.fetch(TestTerm.filter(Column("word") == "hola")).count == 1)
        let counts = try store.database.read { db in try TestSet.annotated(with: TestSet.terms.count).asRequest(of: Row.self).fetchAll(db) }
        #expect(counts.first?["termCount"] == 1)
    }

    @Test func observingGivesTheRowsAgainAfterEveryChange() async throws {
        let store = try store()
        let set = try store.insert(TestSet(title: "s"))
        var iterator = store.observe(TestTerm.self, where: Column("set_id") == set.id).makeAsyncIterator()
        #expect(try await iterator.next()?.isEmpty == true)
        try store.insert(TestTerm(setID: set.id, word: "hola"))
        #expect(try await iterator.next()?.map(\.word) == ["hola"])
        // The same fetch as a GRDB ValueObservation, as SwiftUI's GRDBQuery takes it.
        let observed = try await FerryStore.observation(TestTerm.self).values(in: store.database).first { _ in true }
        #expect(observed?.count == 1)
    }

    @Test func writeGroupsTakeRecordsAndUploadAsOneBatch() throws {
        let store = try store()
        try store.write { tx in
            let set = try tx.insert(TestSet(title: "grouped"))
            try tx.insert(TestTerm(setID: set.id, word: "uno"))
        }
        let input = try store.uploadInput()
        #expect(Set(input.operations.compactMap(\.group)).count == 1 && input.operations.count == 2)
    }
}
