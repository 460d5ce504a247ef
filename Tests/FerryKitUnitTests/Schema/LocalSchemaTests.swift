@testable import FerryKit
import Testing
@testable import FerryKitTestSupport

/// The local tables a server schema needs, as SQL, without a database.
@Suite struct LocalSchemaTests {
    @Test func identifiersAreQuotedWithTheirDoubleQuotesDoubled() {
        #expect(LocalSchema.quote("terms") == "\"terms\"")
        #expect(LocalSchema.quote("say \"hi\"") == "\"say \"\"hi\"\"\"")
        #expect(LocalSchema.quote("") == "\"\"")
    }

    @Test func localSchemaAddsAndNeverDrops() {
        let first = LocalSchema.migrations(to: ExampleSchema.schema, existing: [:])
        #expect(first.count == 4 && first.allSatisfy { $0.hasPrefix("CREATE TABLE") })
        let again = LocalSchema.migrations(
            to: ExampleSchema.schema,
            existing: Dictionary(
                uniqueKeysWithValues: ExampleSchema.schema.resources.map {
                    ($0.name, $0.columns.map(\.name) + ["local_only"])
                }))
        #expect(again.isEmpty)
        let missing = LocalSchema.migrations(to: ExampleSchema.schema, existing: ["folders": ["id", "name"]])
        #expect(missing.contains("ALTER TABLE \"folders\" ADD COLUMN \"revision\" INTEGER"))
        #expect(!missing.contains { $0.contains("DROP") })
    }

    @Test func aRankedResourceIsIndexedInOrderWithinItsScopeAndEveryReferenceIsIndexed() {
        let indexes = LocalSchema.indexes(for: ExampleSchema.schema)
        #expect(indexes.contains("CREATE INDEX IF NOT EXISTS \"ferry_index_terms_set_id_rank\" ON \"terms\" (\"set_id\", \"rank\")"))
        #expect(!indexes.contains { $0.contains("ferry_index_terms_set_id\"") }, "the rank index covers set_id")
        #expect(
            indexes.contains { $0.contains("ferry_index_folder_sets_folder_id") }
                && indexes.contains { $0.contains("ferry_index_study_sets_creator_id") })
    }
}
