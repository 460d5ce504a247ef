@testable import FerryKit
import Foundation
import Testing
@testable import FerryKitTestSupport

/// How planned requests become HTTP calls: bulk per action and resource,
/// order kept, some rows alone.
@Suite struct UploadBundleTests {
    func request(_ action: UploadRequest.Action, _ resource: String, _ id: String, base: Int64? = 1) -> UploadRequest {
        UploadRequest(
            action: action, resource: resource, rowID: id, body: action == .delete ? nil : ["id": .string(id)],
            baseRevision: action == .create ? nil : base, opIDs: [UUID()], lastSequence: 1)
    }

    @Test func editsOfManyRowsGoInBulkCallsOfAtMostMaxBulk() {
        let edits = (0..<250).map { request(.update, "terms", "t\($0)") }
        let bundles = UploadPlanner.bundle(edits, schema: ExampleSchema.schema, maxBulk: 100)
        #expect(bundles.map(\.requests.count) == [100, 100, 50])
        #expect(bundles.flatMap(\.requests) == edits, "every request once, in order")
        #expect(Set(bundles.map(\.idempotencyKey)).count == 3)
    }

    @Test func parentCreatesGoInACallBeforeTheirChildrensAndDeletesAfter() {
        let planned = UploadPlanner.plan(
            [
                PendingOperation(sequence: 1, resource: "terms", rowID: "t1", kind: .create),
                PendingOperation(sequence: 2, resource: "study_sets", rowID: "s1", kind: .create),
                PendingOperation(sequence: 3, resource: "terms", rowID: "t2", kind: .create),
                PendingOperation(sequence: 4, resource: "study_sets", rowID: "s2", kind: .create),
                PendingOperation(sequence: 5, resource: "terms", rowID: "old-t", kind: .delete),
                PendingOperation(sequence: 6, resource: "study_sets", rowID: "old-s", kind: .delete),
            ],
            schema: ExampleSchema.schema,
            rows: [
                RowKey(resource: "terms", id: "t1"): [:], RowKey(resource: "terms", id: "t2"): [:],
                RowKey(resource: "study_sets", id: "s1"): [:], RowKey(resource: "study_sets", id: "s2"): [:],
            ],
            bases: [RowKey(resource: "terms", id: "old-t"): 3, RowKey(resource: "study_sets", id: "old-s"): 2])
        let calls = UploadPlanner.bundle(planned, schema: ExampleSchema.schema).map { bundle in
            "\(bundle.requests[0].action) \(bundle.requests[0].resource) \(bundle.requests.map(\.rowID).joined(separator: ","))"
        }
        #expect(calls == ["create study_sets s1,s2", "create terms t1,t2", "delete terms old-t", "delete study_sets old-s"])
    }

    @Test func rowsNamedSoloAndWritesWithoutABaseGoAlone() {
        let edits = [
            request(.update, "terms", "a"), request(.update, "terms", "b"), request(.update, "terms", "c", base: nil),
            request(.update, "terms", "d"), request(.delete, "terms", "e", base: nil),
        ]
        let bundles = UploadPlanner.bundle(edits, schema: ExampleSchema.schema, solo: [RowKey(resource: "terms", id: "b")])
        #expect(bundles.map { $0.requests.map(\.rowID) }.sorted { $0.joined() < $1.joined() } == [["a", "d"], ["b"], ["c"], ["e"]])
        #expect(bundles.filter(\.isBulk).count == 1)
        let alone = bundles.first { $0.requests.map(\.rowID) == ["b"] }
        #expect(alone?.idempotencyKey == edits[1].idempotencyKey, "a request sent alone keeps its own key")
    }
}
