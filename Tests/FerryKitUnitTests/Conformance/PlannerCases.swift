@testable import FerryKit
import Foundation
@testable import FerryKitTestSupport

/// `clients/conformance/outbox.json`: how pending operations become requests
/// (UploadPlanner: coalescing, order, bodies, base revisions), the `Idempotency-Key`
/// each request carries (a retry of the same operations carries the same key, so the
/// server replays its first answer), and the outbox's state machine (OutboxState).
enum PlannerCases {
    static let schema = ExampleSchema.schema

    static func file() -> ConformanceFile {
        var plans: [JSONValue] = []
        var sequence: Int64 = 0
        var uuidCounter = 0
        func uuid() -> UUID {
            uuidCounter += 1
            return UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", uuidCounter))!
        }
        func op(_ resource: String, _ id: String, _ kind: PendingOperation.Kind, _ fields: Set<String> = [], group: String? = nil, sent: Bool = false)
            -> PendingOperation
        {
            sequence += 1
            return PendingOperation(
                opID: uuid(), sequence: sequence, resource: resource, rowID: id, kind: kind, fields: fields, group: group, sent: sent)
        }
        func add(_ name: String, _ ops: [PendingOperation], rows: [RowKey: RowData] = [:], bases: [RowKey: Int64] = [:]) {
            let plan = UploadPlanner.plan(ops, schema: schema, rows: rows, bases: bases)
            let batches = UploadPlanner.writeGroups(plan)
            // The calls they go in, at a bulk size of 2 so that splitting shows.
            let bundles = UploadPlanner.bundle(plan, schema: schema, maxBulk: 2)
            plans.append(
                .object([
                    "batches": .array(plan.indices.map { batches[$0].map(JSONValue.of) ?? .null }),
                    "bundles": .array(
                        bundles.map { b in
                            .object([
                                "requests": .array(b.requests.map { r in .of(plan.firstIndex { $0.opIDs == r.opIDs } ?? -1) }),
                                "batch": .of(b.isBatch), "bulk": .of(b.isBulk), "idempotencyKey": .of(b.idempotencyKey),
                            ])
                        }),
                    "name": .of(name),
                    "operations": .array(
                        ops.map { o in
                            var v: [String: JSONValue] = [
                                "opID": .of(o.opID.uuidString.lowercased()), "sequence": .of(o.sequence), "resource": .of(o.resource),
                                "rowID": .of(o.rowID), "kind": .of(o.kind.rawValue), "fields": .of(o.fields.sorted()), "sent": .of(o.sent),
                            ]
                            v["group"] = .of(o.group)
                            return .object(v)
                        }),
                    "rows": .array(
                        rows.sorted { ($0.key.resource, $0.key.id) < ($1.key.resource, $1.key.id) }.map {
                            .object(["resource": .of($0.key.resource), "id": .of($0.key.id), "row": .object($0.value)])
                        }),
                    "bases": .array(
                        bases.sorted { ($0.key.resource, $0.key.id) < ($1.key.resource, $1.key.id) }.map {
                            .object(["resource": .of($0.key.resource), "id": .of($0.key.id), "revision": .of($0.value)])
                        }),
                    "expect": .array(
                        plan.map { r in
                            .object([
                                "action": .of(r.action.rawValue), "resource": .of(r.resource), "rowID": .of(r.rowID), "body": .of(r.body),
                                "baseRevision": .of(r.baseRevision), "opIDs": .of(r.opIDs.map { $0.uuidString.lowercased() }),
                                "lastSequence": .of(r.lastSequence), "groups": .of(r.groups.sorted()), "idempotencyKey": .of(r.idempotencyKey),
                            ])
                        }),
                ]))
        }
        let set = RowKey(resource: "study_sets", id: "s1"), term = RowKey(resource: "terms", id: "t1")
        let setRow: RowData = [
            "id": .string("s1"), "title": .string("T10"), "description": .string("D9"), "revision": .int(3), "creator_id": .string("u1"),
        ]
        let newSet: RowData = ["id": .string("s1"), "title": .string("final"), "description": .string("d"), "revision": .null, "creator_id": .null]
        let termRow: RowData = ["id": .string("t1"), "set_id": .string("s1"), "word": .string("w"), "definition": .string("d"), "rank": .string("V")]

        add("one update: a PATCH keyed by its op id", [op("study_sets", "s1", .update, ["title"])], rows: [set: setRow], bases: [set: 3])
        add(
            "ten updates of one row coalesce into one PATCH of the union of fields",
            (1...10).map { op("study_sets", "s1", .update, $0 % 2 == 0 ? ["title"] : ["description"]) }, rows: [set: setRow], bases: [set: 3])
        add(
            "a create and later updates send one POST of the fields the app set",
            [
                op("study_sets", "s1", .create, ["title"]), op("study_sets", "s1", .update, ["title"]),
                op("study_sets", "s1", .update, ["description"]),
            ],
            rows: [set: newSet])
        add(
            "a create then a delete sends nothing",
            [op("study_sets", "s1", .create, ["title"]), op("study_sets", "s1", .update, ["title"]), op("study_sets", "s1", .delete)])
        add(
            "a create sent before without an answer, then deleted: one DELETE of whatever is there",
            [op("study_sets", "s1", .create, ["title"], sent: true), op("study_sets", "s1", .delete)])
        add(
            "updates then a delete: one DELETE on the base revision",
            [op("study_sets", "s1", .update, ["title"]), op("study_sets", "s1", .delete)], rows: [set: setRow], bases: [set: 3])
        add(
            "a field not writable is not sent", [op("study_sets", "s1", .update, ["title", "revision", "nonsense"])], rows: [set: setRow],
            bases: [set: 3])
        add("an unknown resource is skipped", [op("nowhere", "x", .update, ["a"])], rows: [RowKey(resource: "nowhere", id: "x"): ["a": .int(1)]])
        add("an update of a row no longer stored is skipped", [op("study_sets", "s1", .update, ["title"])], bases: [set: 3])
        add(
            "parents are created first, children deleted first",
            [
                op("terms", "t1", .create, ["word", "set_id", "rank"]), op("study_sets", "s1", .create, ["title"]),
                op("terms", "t2", .delete), op("study_sets", "s2", .delete), op("folder_sets", "f1", .create, ["folder_id", "set_id"]),
                op("folders", "d1", .create, ["name"]), op("terms", "t3", .update, ["word"]),
            ],
            rows: [
                term: termRow, set: newSet,
                RowKey(resource: "folder_sets", id: "f1"): ["id": .string("f1"), "folder_id": .string("d1"), "set_id": .string("s1")],
                RowKey(resource: "folders", id: "d1"): ["id": .string("d1"), "name": .string("F")],
                RowKey(resource: "terms", id: "t3"): ["id": .string("t3"), "word": .string("w3")],
            ],
            bases: [RowKey(resource: "terms", id: "t2"): 4, RowKey(resource: "study_sets", id: "s2"): 9, RowKey(resource: "terms", id: "t3"): 2])
        add(
            "writes of one transaction carry its group",
            [
                op("study_sets", "s1", .create, ["title"], group: "g1"), op("terms", "t1", .create, ["word", "set_id", "rank"], group: "g1"),
                op("terms", "t1", .update, ["word"], group: "g2"),
            ],
            rows: [set: newSet, term: termRow])
        add(
            "a retry of the same operations carries the same key (the server replays)",
            [op("study_sets", "s1", .update, ["title"], sent: true), op("study_sets", "s1", .update, ["description"], sent: true)],
            rows: [set: setRow], bases: [set: 3])
        add(
            "groups sharing a row are one batch; a group of one request is no batch",
            [
                op("study_sets", "s1", .create, ["title"], group: "g1"), op("terms", "t1", .create, ["word", "set_id", "rank"], group: "g2"),
                op("terms", "t1", .update, ["word"], group: "g1"), op("folders", "d1", .create, ["name"], group: "g3"),
                op("folder_sets", "f1", .create, ["folder_id", "set_id"], group: "g4"), op("folders", "d2", .create, ["name"], group: "g4"),
            ],
            rows: [
                set: newSet, term: termRow, RowKey(resource: "folders", id: "d1"): ["id": .string("d1"), "name": .string("F")],
                RowKey(resource: "folders", id: "d2"): ["id": .string("d2"), "name": .string("G")],
                RowKey(resource: "folder_sets", id: "f1"): ["id": .string("f1"), "folder_id": .string("d2"), "set_id": .string("s1")],
            ])
        add(
            "requests of one action on one resource at one step go in bulk calls (at most 2 here); a base-less update goes alone",
            [
                op("folders", "d1", .create, ["name"]), op("folders", "d2", .create, ["name"]), op("folders", "d3", .create, ["name"]),
                op("study_sets", "s1", .update, ["title"]), op("study_sets", "s2", .update, ["title"]),
                op("study_sets", "s3", .update, ["title"]), op("terms", "t1", .delete), op("terms", "t2", .delete),
                op("study_sets", "s4", .delete),
            ],
            rows: [
                RowKey(resource: "folders", id: "d1"): ["id": .string("d1"), "name": .string("A")],
                RowKey(resource: "folders", id: "d2"): ["id": .string("d2"), "name": .string("B")],
                RowKey(resource: "folders", id: "d3"): ["id": .string("d3"), "name": .string("C")],
                set: setRow, RowKey(resource: "study_sets", id: "s2"): ["id": .string("s2"), "title": .string("U")],
                RowKey(resource: "study_sets", id: "s3"): ["id": .string("s3"), "title": .string("V")],
            ],
            bases: [
                set: 3, RowKey(resource: "study_sets", id: "s2"): 5, RowKey(resource: "terms", id: "t1"): 1,
                RowKey(resource: "terms", id: "t2"): 2, RowKey(resource: "study_sets", id: "s4"): 7,
            ])
        add(
            "a null field is sent as null", [op("study_sets", "s1", .update, ["description"])],
            rows: [set: ["id": .string("s1"), "title": .string("T"), "revision": .int(3)]], bases: [set: 3])

        var transitions: [JSONValue] = []
        for state in OutboxState.allCases {
            for event in OutboxState.Event.allCases {
                let outcome: JSONValue
                switch OutboxState.transition(state, event) {
                case nil: outcome = .null
                case .leaves?: outcome = .object(["leaves": .of(true)])
                case .becomes(let next, let counts)?: outcome = .object(["becomes": .of(next.rawValue), "countsAttempt": .of(counts)])
                }
                transitions.append(.object(["state": .of(state.rawValue), "event": .of("\(event)"), "expect": outcome]))
            }
        }
        var digests: [JSONValue] = []
        for text in ["", "a", "ops", "00000000-0000-4000-8000-000000000001,00000000-0000-4000-8000-000000000002", "ünïcödé ✓"] {
            digests.append(.object(["text": .of(text), "digest": .of(UploadPlanner.digest(text))]))
        }
        return ConformanceFile(
            name: "outbox.json",
            about:
                "FerryKit's outbox (Sources/FerryKit/Outbox), generated by Tests/FerryKitUnitTests/Conformance/PlannerCases.swift. plans: pending operations (fields: the per-field dirty mask; sent: it went out before without a settling answer) with the rows as stored and the base revisions, and the requests UploadPlanner makes of them, in order. schema: the resources the plans use (GET /v1's shape). idempotencyKey: one operation's op id, or ops- and the digest of the sorted op ids joined by commas; a retry of the same request carries the same key, which is what lets the server replay instead of applying twice. batches: for each planned request, the number of the /v1/batch its write group goes in (groups sharing a row are one batch; null: not in a group of two or more). bundles: the HTTP calls the plan goes in (UploadPlanner.bundle at a bulk size of 2), in sending order: requests (indices into expect), batch (one /v1/batch), bulk (one POST, PATCH or DELETE /v1/<r> with an array), and the call's Idempotency-Key (a single request's own key; else batch- or ops- and the digest of the call's sorted op ids). transitions: every (state, event) of the outbox's state machine; null when the event leaves the operation as it is. digests: the digest (two 64-bit FNV-1a lanes over UTF-8, hex) used for those keys.",
            sections: [
                (
                    "schema",
                    schema.resources.map { r in
                        .object([
                            "name": .of(r.name),
                            "columns": .array(
                                r.columns.map { c in
                                    .object(["name": .of(c.name), "writable": .of(c.writable), "references": .of(c.references)])
                                }),
                        ])
                    }
                ), ("plans", plans), ("transitions", transitions), ("digests", digests),
            ])
    }
}
