import FerryKit
import Foundation
import Testing
@testable import FerryKitTestSupport

/// A column the server types with a domain (`CREATE DOMAIN app.level AS integer`):
/// GET /v1 gives its `base_type`, and the store keeps, checks and reads its values
/// as that type. By its domain's name alone, an integer would be stored as text and
/// sent back as `"3"`, which the server refuses.
@Suite struct DomainColumnTests {
    static let listing = """
        {"resources": [{"name": "gauges", "columns": [
            {"name": "id", "type": "uuid", "base_type": "uuid", "nullable": false, "writable": true, "has_default": true},
            {"name": "level", "type": "app.level", "base_type": "integer", "nullable": true, "writable": true},
            {"name": "lit", "type": "app.flag", "base_type": "boolean", "nullable": true, "writable": true},
            {"name": "revision", "type": "bigint", "nullable": false, "writable": false, "has_default": true},
            {"name": "last_modified", "type": "bigint", "nullable": false, "writable": false, "has_default": true},
            {"name": "is_deleted", "type": "boolean", "nullable": false, "writable": false, "has_default": true}]}]}
        """

    @Test func aDomainColumnIsStoredCheckedAndReadAsItsBaseType() throws {
        let schema = try JSONDecoder().decode(ServerSchema.self, from: Data(Self.listing.utf8))
        let level = try #require(schema.resources.first?.columns.first { $0.name == "level" })
        #expect(level.type == "app.level" && level.baseType == "integer" && level.valueType == "integer")
        let tables = LocalSchema.migrations(to: schema, existing: [:]).joined(separator: "\n")
        #expect(tables.contains("\"level\" INTEGER") && tables.contains("\"lit\" INTEGER"), "\(tables)")

        let store = try FerryStore(path: ":memory:")
        try store.apply(schema: schema)
        #expect(throws: FerryKitError.typeMismatch(resource: "gauges", column: "level", expected: "app.level", got: "the string \"3\"")) {
            try store.create("gauges", ["level": .string("3")])
        }
        let id = try store.create("gauges", ["level": .int(3), "lit": .bool(true)])
        let row = try #require(try store.row("gauges", id: id))
        #expect(row["level"] == .int(3))
        #expect(row["lit"] == .bool(true))
    }
}
