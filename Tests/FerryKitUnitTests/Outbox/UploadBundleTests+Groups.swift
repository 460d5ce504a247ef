@testable import FerryKit
import Foundation
import Testing
@testable import FerryKitTestSupport

extension UploadBundleTests {
    @Test func aWriteGroupIsOneBatchInPlannedOrderAndGroupsSharingARowJoin() {
        let ops = [
            PendingOperation(sequence: 1, resource: "terms", rowID: "t1", kind: .create, group: "g1"),
            PendingOperation(sequence: 2, resource: "study_sets", rowID: "s1", kind: .create, group: "g1"),
            PendingOperation(sequence: 3, resource: "study_sets", rowID: "s2", kind: .create),
            PendingOperation(sequence: 4, resource: "terms", rowID: "t2", kind: .create),
            PendingOperation(sequence: 5, resource: "folders", rowID: "f1", kind: .create, group: "g2"),
            // Outside any group, but on a row of g2: it goes with g2.
            PendingOperation(sequence: 6, resource: "folders", rowID: "f1", kind: .update, fields: ["name"]),
            // g3 writes t1, which g1 wrote: one batch with g1.
            PendingOperation(sequence: 7, resource: "terms", rowID: "t1", kind: .update, fields: ["word"], group: "g3"),
            PendingOperation(sequence: 8, resource: "terms", rowID: "t3", kind: .create, group: "g3"),
            // A group of one request is just that request.
            PendingOperation(sequence: 9, resource: "terms", rowID: "t4", kind: .create, group: "g4"),
        ]
        let rows = Dictionary(ops.map { (RowKey(resource: $0.resource, id: $0.rowID), RowData()) }, uniquingKeysWith: { a, _ in a })
        let planned = UploadPlanner.plan(ops, schema: ExampleSchema.schema, rows: rows, bases: [:])
        let bundles = UploadPlanner.bundle(planned, schema: ExampleSchema.schema)
        let batches = bundles.filter(\.isBatch)
        #expect(batches.count == 1, "g1 and g3 share t1; g2 holds one row")
        #expect(batches.first?.requests.map(\.rowID) == ["s1", "t1", "t3"], "parents first inside the batch")
        #expect(batches.first?.idempotencyKey.hasPrefix("batch-") == true)
        let calls = bundles.map { ($0.isBatch ? "batch " : "") + $0.requests.map(\.rowID).joined(separator: ",") }
        #expect(
            calls == ["batch s1,t1,t3", "s2", "f1", "t2,t4"],
            "the batch goes at its first request's step (study_sets creates), before the children made outside it")
    }
}
