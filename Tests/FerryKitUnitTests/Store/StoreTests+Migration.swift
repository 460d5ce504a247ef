@testable import FerryKit
import Foundation
import GRDB
import Testing
@testable import FerryKitTestSupport

extension StoreTests {
    /// A file written by an older FerryKit (its own tables at "ferry 1") opens
    /// with every unsynced write still queued and still uploadable.
    @Test func aStoreFromTheFirstFileFormatOpensWithItsUnsyncedWritesIntact() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ferrykit-v1-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        do {
            let old = try DatabaseQueue(path: path)
            try FerryStore.migrator.migrate(old, upTo: "ferry 1")
            try old.write { db in
                try db.execute(sql: "CREATE TABLE study_sets (id TEXT PRIMARY KEY NOT NULL, title TEXT, revision INTEGER)")
                try db.execute(sql: "INSERT INTO study_sets (id, title) VALUES ('s1', 'offline')")
                try db.execute(
                    sql: """
                        INSERT INTO ferry_outbox (op_id, resource, row_id, kind, fields)
                        VALUES ('6f1c3c52-8f6e-4c1a-9d7e-1b2c3d4e5f60', 'study_sets', 's1', 'create', '["title"]')
                        """)
            }
            try old.close()
        }
        let store = try FerryStore(path: path)
        try store.apply(schema: ExampleSchema.schema)
        #expect(try store.pendingCount() == 1)
        let entry = try #require(try store.outbox().first)
        #expect(entry.rowID == "s1" && entry.kind == "create" && entry.createdAt == nil)
        #expect(try store.uploadInput().operations.map(\.rowID) == ["s1"])
        #expect(try store.row("study_sets", id: "s1")?["title"] == .string("offline"))
    }
}
