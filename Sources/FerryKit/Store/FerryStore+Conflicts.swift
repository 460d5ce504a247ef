import Foundation
import GRDB

/// Rows whose pending edits came out of a merge with conflicting fields: their
/// ``FerryStore/RowState`` is `conflict` until the merged version is uploaded.
extension FerryStore {
    static func recordConflict(_ db: Database, _ resource: String, id: String, fields: [String]) throws {
        let encoded = String(decoding: try JSONEncoder().encode(fields.sorted()), as: UTF8.self)
        try db.cachedStatement(
            sql: """
                INSERT INTO ferry_conflict (resource, id, fields) VALUES (?, ?, ?)
                ON CONFLICT (resource, id) DO UPDATE SET fields = excluded.fields
                """
        ).execute(arguments: [resource, id, encoded])
    }

    static func clearConflict(_ db: Database, _ resource: String, id: String) throws {
        try db.cachedStatement(sql: "DELETE FROM ferry_conflict WHERE resource = ? AND id = ?").execute(arguments: [resource, id])
    }

    static func hasConflict(_ db: Database, _ resource: String, id: String) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM ferry_conflict WHERE resource = ? AND id = ?)"),
            arguments: [resource, id]) ?? false
    }
}
