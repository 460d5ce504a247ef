@testable import FerryKit
import Foundation
import Testing
@testable import FerryKitTestSupport

@Suite struct UploadPlannerTests {
    let set = RowKey(resource: "study_sets", id: "s1")

    func op(_ seq: Int64, _ key: RowKey, _ kind: PendingOperation.Kind, _ fields: Set<String> = []) -> PendingOperation {
        PendingOperation(sequence: seq, resource: key.resource, rowID: key.id, kind: kind, fields: fields)
    }

    @Test func tenEditsOfOneRowSendOnePatchOfTheChangedFields() {
        let ops = (1...10).map { op(Int64($0), set, .update, $0 % 2 == 0 ? ["title"] : ["description"]) }
        let row: RowData = ["id": .string("s1"), "title": .string("T10"), "description": .string("D9"), "revision": .int(3)]
        let plan = UploadPlanner.plan(ops, schema: ExampleSchema.schema, rows: [set: row], bases: [set: 3])
        #expect(plan.count == 1)
        #expect(plan[0].action == .update)
        #expect(plan[0].body == ["title": .string("T10"), "description": .string("D9")])
        #expect(plan[0].baseRevision == 3)
        #expect(plan[0].opIDs == ops.map(\.opID))
        #expect(plan[0].lastSequence == 10)
    }

    @Test func aCreateFollowedByEditsSendsOnePostOfTheFinalRow() {
        let ops = [op(1, set, .create, ["title"]), op(2, set, .update, ["title"]), op(3, set, .update, ["description"])]
        // creator_id was never set: it stays out, for the server's default.
        let row: RowData = ["id": .string("s1"), "title": .string("final"), "description": .string("d"), "revision": .null, "creator_id": .null]
        let plan = UploadPlanner.plan(ops, schema: ExampleSchema.schema, rows: [set: row], bases: [:])
        #expect(plan.map(\.action) == [.create])
        #expect(plan[0].body == ["id": .string("s1"), "title": .string("final"), "description": .string("d")])
    }

    @Test func aCreateFollowedByADeleteSendsNothing() {
        let ops = [op(1, set, .create, ["title"]), op(2, set, .update, ["title"]), op(3, set, .delete)]
        #expect(UploadPlanner.plan(ops, schema: ExampleSchema.schema, rows: [:], bases: [:]).isEmpty)
    }

    @Test func aCreateSentBeforeWithoutAnAnswerThenDeletedSendsOneDeleteOfWhateverIsThere() {
        let sent = PendingOperation(sequence: 1, resource: set.resource, rowID: set.id, kind: .create, fields: ["title"], sent: true)
        let ops = [sent, op(2, set, .delete)]
        let requests = UploadPlanner.plan(ops, schema: ExampleSchema.schema, rows: [:], bases: [:])
        #expect(requests.count == 1)
        #expect(requests.first?.action == .delete && requests.first?.baseRevision == nil, "If-Match: *, no revision known")
        #expect(requests.first?.opIDs.count == 2)
    }

    @Test func editsFollowedByADeleteSendOneDeleteOnTheBase() {
        let ops = [op(1, set, .update, ["title"]), op(2, set, .delete)]
        let plan = UploadPlanner.plan(ops, schema: ExampleSchema.schema, rows: [:], bases: [set: 7])
        #expect(plan.map(\.action) == [.delete])
        #expect(plan[0].baseRevision == 7)
        #expect(plan[0].body == nil)
    }

    @Test func parentsAreCreatedBeforeChildrenAndDeletedAfterThem() {
        let folder = RowKey(resource: "folders", id: "f"), link = RowKey(resource: "folder_sets", id: "l")
        let term = RowKey(resource: "terms", id: "t"), old = RowKey(resource: "study_sets", id: "old"), oldTerm = RowKey(resource: "terms", id: "ot")
        // Written children first, on purpose.
        let ops = [
            op(1, link, .create), op(2, term, .create), op(3, set, .create), op(4, folder, .create),
            op(5, old, .delete), op(6, oldTerm, .delete),
        ]
        let rows: [RowKey: RowData] = [
            link: ["id": .string("l")], term: ["id": .string("t")], set: ["id": .string("s1")],
            folder: ["id": .string("f")],
        ]
        let plan = UploadPlanner.plan(ops, schema: ExampleSchema.schema, rows: rows, bases: [old: 1, oldTerm: 1])
        let order = plan.map { "\($0.action.rawValue) \($0.resource)" }
        func index(_ text: String) -> Int { order.firstIndex(of: text) ?? -1 }
        #expect(index("create study_sets") < index("create terms"))
        #expect(index("create study_sets") < index("create folder_sets"))
        #expect(index("create folders") < index("create folder_sets"))
        #expect(index("delete terms") < index("delete study_sets"))
        #expect(plan.count == 6)
    }

    @Test func keysAreTheOpIdOrAStableDigestOfAllOfThem() {
        let one = UploadRequest(
            action: .update, resource: "r", rowID: "1", body: [:], baseRevision: 1,
            opIDs: [UUID(uuidString: "6F9619FF-8B86-D011-B42D-00C04FC964FF")!], lastSequence: 1)
        #expect(one.idempotencyKey == "6f9619ff-8b86-d011-b42d-00c04fc964ff")
        let ids = (0..<3).map { _ in UUID() }
        let a = UploadRequest(action: .update, resource: "r", rowID: "1", body: [:], baseRevision: 1, opIDs: ids, lastSequence: 3)
        let b = UploadRequest(action: .update, resource: "r", rowID: "1", body: [:], baseRevision: 1, opIDs: ids.reversed(), lastSequence: 3)
        let c = UploadRequest(action: .update, resource: "r", rowID: "1", body: [:], baseRevision: 1, opIDs: Array(ids.prefix(2)), lastSequence: 2)
        #expect(a.idempotencyKey == b.idempotencyKey)
        #expect(a.idempotencyKey != c.idempotencyKey)
        #expect(a.idempotencyKey.count <= 255)
    }
}
