@testable import FerryKit
import Foundation
import GRDB
import Testing
@testable import FerryKitTestSupport

/// Writes an app makes with plain GRDB, records or SQL, inside
/// `store.database.write`: recorded for upload in the same transaction, as
/// the store's own calls are; checked the same way; and never for the
/// engine's own applies.
@Suite struct GRDBWritesTests {
    func store(_ schema: ServerSchema = ExampleSchema.withScores) throws -> FerryStore {
        let store = try FerryStore(path: ":memory:")
        try store.apply(schema: schema)
        return store
    }

    static let setID = "00000000-0000-4000-8000-000000000001"

    func synced(_ store: FerryStore) throws {
        _ = try store.applyPage(
            [
                (
                    "study_sets",
                    [
                        "id": .string(Self.setID), "title": .string("T"), "description": .string("D"),
                        "creator_id": .string("u"), "revision": .int(1),
                    ]
                )
            ], cursor: "c1"
        ) { _ in nil }
    }

    @Test func sqlWritesAreRecordedWithTheirDirtyMaskAndBase() throws {
        let store = try store()
        try synced(store)
        #expect(try store.pendingCount() == 0, "the engine's own apply records nothing")
        try store.database.write { db in
            try db.execute(sql: "UPDATE study_sets SET title = 'mine' WHERE id = ?", arguments: [Self.setID])
            try db.execute(
                sql: "INSERT INTO terms (id, set_id, word) VALUES ('00000000-0000-4000-8000-0000000000a1', ?, 'hola')",
                arguments: [Self.setID])
            try db.execute(sql: "UPDATE study_sets SET title = 'mine' WHERE id = ?", arguments: [Self.setID])  // no change: nothing
        }
        let input = try store.uploadInput()
        #expect(input.operations.map(\.kind) == [.update, .create])
        #expect(input.operations.map(\.fields) == [["title"], ["set_id", "word"]])
        #expect(input.bases[RowKey(resource: "study_sets", id: Self.setID)] == 1, "the server version is kept as the merge's base")
        #expect(Set(input.operations.map(\.opID)).count == 2, "each operation its own id: its Idempotency-Key")
        let plan = UploadPlanner.plan(input.operations, schema: ExampleSchema.withScores, rows: input.rows, bases: input.bases)
        #expect(plan.map(\.action) == [.create, .update])
        #expect(plan.last?.body == ["title": .string("mine")] && plan.last?.baseRevision == 1)
    }

    @Test func recordsWrittenWithGRDBAreRecordedAndCoalesceLikeStoreWrites() throws {
        let store = try store()
        try synced(store)
        try store.database.write { db in
            var set = try #require(try TestSet.fetchOne(db, key: Self.setID))
            set.description = "theirs too"
            try set.update(db)
            set.title = "both"
            try set.update(db)
            try TestTerm(setID: set.id, word: "uno", rank: "U").insert(db)
            try TestSet(title: "doomed").insert(db)
        }
        try store.database.write { db in _ = try TestSet.filter(Column("title") == "doomed").deleteAll(db) }
        let input = try store.uploadInput()
        let plan = UploadPlanner.plan(input.operations, schema: ExampleSchema.withScores, rows: input.rows, bases: input.bases)
        #expect(plan.count == 2, "two updates of the set are one PATCH; a row created and deleted before upload sends nothing: \(plan)")
        #expect(plan.first { $0.action == .update }?.body == ["title": .string("both"), "description": .string("theirs too")])
        #expect(try store.state("study_sets", id: Self.setID) == .dirty)
    }

    @Test func aGroupsGRDBWritesUploadWithTheGroup() throws {
        let store = try store()
        try store.write { tx in
            let set = try tx.insert(TestSet(title: "grouped"))
            try tx.database.execute(
                sql: "INSERT INTO terms (id, set_id, rank) VALUES ('00000000-0000-4000-8000-0000000000a2', ?, 'U')",
                arguments: [set.id])
        }
        try store.database.write { db in try TestSet(title: "alone").insert(db) }
        let groups = try store.uploadInput().operations.map(\.group)
        #expect(groups[0] != nil && groups[0] == groups[1] && groups[2] == nil)
    }

    @Test func aGRDBWriteThatBreaksTheSchemaIsRefusedAndChangesNothing() throws {
        let store = try store()
        try synced(store)
        _ = try store.applyPage(
            [
                (
                    "terms",
                    [
                        "id": .string("00000000-0000-4000-8000-0000000000a3"), "set_id": .string(Self.setID),
                        "word": .string("synced"), "rank": .string("V"), "revision": .int(1),
                    ]
                )
            ], cursor: nil
        ) { _ in nil }
        let before = try StoreTests.contents(store)
        let refusals: [(String, String)] = [
            (
                "UPDATE terms SET set_id = '00000000-0000-4000-8000-0000000000ff' WHERE id = '00000000-0000-4000-8000-0000000000a3'",
                "terms.set_id is read-only once the server has the row"
            ),
            ("UPDATE study_sets SET revision = 7", "study_sets.revision is read-only: the server sets it"),
            (
                "INSERT INTO scores (id, player, points) VALUES ('00000000-0000-4000-8000-0000000000b1', 'p', 'ten')",
                "scores.points is integer on the server"
            ),
            ("INSERT INTO study_sets (id) VALUES ('00000000-0000-4000-8000-0000000000b2')", "study_sets.title is required"),
            ("INSERT INTO study_sets (id, title) VALUES ('not-a-uuid', 't')", "study_sets.id is uuid on the server"),
            ("INSERT INTO study_sets (title) VALUES ('no id')", "NOT NULL constraint failed: study_sets.id"),
            (
                "INSERT INTO ferry_outbox (op_id, resource, row_id, kind, fields) VALUES ('x', 'terms', 'y', 'delete', '[]')",
                "ferry_outbox is FerryKit's record of what to upload"
            ),
            ("UPDATE ferry_outbox SET state = 'rejected'", "ferry_outbox is FerryKit's"),
            ("DELETE FROM ferry_outbox", "ferry_outbox is FerryKit's"),
        ]
        for (sql, message) in refusals {
            do {
                try store.database.write { db in
                    try db.execute(sql: "UPDATE study_sets SET description = 'first, in the same transaction'")
                    try db.execute(sql: sql)
                }
                Issue.record("accepted: \(sql)")
            } catch let error as DatabaseError {
                #expect(error.message?.contains(message) == true, "\(sql): \(error)")
            }
            #expect(try StoreTests.contents(store) == before, "\(sql) left a trace")
        }
        // And the store's own bookkeeping still works: these are FerryKit's writes.
        try store.clearRejected()
    }

    @Test func aConnectionWithoutFerryKitCannotWriteASyncedTableBehindItsBack() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ferrykit-bypass-\(UUID()).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        do {
            let store = try FerryStore(path: path)
            try store.apply(schema: ExampleSchema.schema)
        }
        let plain = try DatabaseQueue(path: path)
        #expect(throws: DatabaseError.self) {
            try plain.write { db in try db.execute(sql: "INSERT INTO study_sets (id, title) VALUES ('00000000-0000-4000-8000-000000000001', 't')") }
        }
        #expect(try plain.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM study_sets") } == 0)
    }

    @Test func aWideRowKeepsItsWholeBase() throws {
        let columns = (0..<70).map { ServerSchema.Column(name: "c\($0)", type: $0 % 2 == 0 ? "integer" : "boolean") }
        let wide = ServerSchema.Resource(name: "wide", columns: [ExampleSchema.id] + columns + ExampleSchema.sync)
        let store = try store(ServerSchema(resources: [wide]))
        var row: RowData = ["id": .string(Self.setID), "revision": .int(1)]
        for (index, column) in columns.enumerated() { row[column.name] = index % 2 == 0 ? .int(Int64(index)) : .bool(true) }
        _ = try store.applyPage([("wide", row)], cursor: nil) { _ in nil }
        try store.database.write { db in try db.execute(sql: "UPDATE wide SET c0 = 100") }
        let base = try store.database.read { db in try FerryStore.base(db, "wide", id: Self.setID) }
        #expect(base?.row == row, "every column, booleans as booleans")
    }
}
