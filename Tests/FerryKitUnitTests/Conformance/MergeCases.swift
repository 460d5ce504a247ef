@testable import FerryKit
import Foundation

/// `clients/conformance/merge.json` and `feed.json`: the three-way merge
/// (Sources/FerryKit/Merge/ThreeWayMerge.swift) and what one server row does to the
/// local copy (RemoteDecision: a feed entry, an Index row, a conflict's `current`).
enum MergeCases {
    /// The resolvers a case may name: the app's hook, reduced to what JSON can say.
    static func resolver(_ name: String?) -> ThreeWayMerge.Resolver? {
        switch name {
        case "remote": { $0.remote }
        case "base": { $0.base }
        case "drop": { _ in nil }
        case "joined": { c in .string([c.local?.string, c.remote?.string].compactMap { $0 }.joined(separator: "+")) }
        default: nil
        }
    }

    static func encode(_ conflicts: [ThreeWayMerge.Conflict]) -> JSONValue {
        .array(
            conflicts.map { c in
                var o: [String: JSONValue] = ["field": .of(c.field)]
                if let v = c.base { o["base"] = v }
                if let v = c.local { o["local"] = v }
                if let v = c.remote { o["remote"] = v }
                return .object(o)
            })
    }

    static func row(_ revision: Int64?, _ fields: [String: String?] = [:], deleted: Bool = false, revoked: Bool = false) -> RowData {
        var r: RowData = ["id": .string("r1"), "is_deleted": .bool(deleted)]
        if let revision { r["revision"] = .int(revision); r["last_modified"] = .int(1_000 + revision) }
        for (k, v) in fields { r[k] = v.map(JSONValue.string) ?? .null }
        if revoked { r["revoked"] = .bool(true) }
        return r
    }

    static func mergeFile() -> ConformanceFile {
        var cases: [JSONValue] = []
        func add(_ name: String, base: RowData?, local: RowData, remote: RowData, dirty: Set<String>, resolver: String? = nil) {
            let (merged, conflicts) = ThreeWayMerge.merge(base: base, local: local, remote: remote, dirty: dirty, resolve: Self.resolver(resolver))
            var o: [String: JSONValue] = [
                "name": .of(name), "base": .of(base), "local": .object(local), "remote": .object(remote),
                "dirty": .of(dirty.sorted()), "expect": .object(["row": .object(merged), "conflicts": encode(conflicts)]),
            ]
            if let resolver { o["resolver"] = .of(resolver) }
            cases.append(.object(o))
        }
        let base = row(3, ["title": "T", "body": "B", "color": "red"])
        add("only the server changed: its values", base: base, local: base, remote: row(4, ["title": "T2", "body": "B2", "color": "red"]), dirty: [])
        add(
            "disjoint fields: both kept", base: base, local: row(3, ["title": "mine", "body": "B", "color": "red"]),
            remote: row(4, ["title": "T", "body": "theirs", "color": "red"]), dirty: ["title"])
        add(
            "same field, same value: no conflict", base: base, local: row(3, ["title": "X", "body": "B", "color": "red"]),
            remote: row(4, ["title": "X", "body": "B", "color": "blue"]), dirty: ["title"])
        add(
            "same field, different values: local wins, reported", base: base, local: row(3, ["title": "mine", "body": "B", "color": "red"]),
            remote: row(4, ["title": "theirs", "body": "B", "color": "red"]), dirty: ["title"])
        for name in ["remote", "base", "drop", "joined"] {
            add(
                "a conflict decided by the \(name) resolver", base: base, local: row(3, ["title": "mine", "body": "b2", "color": "red"]),
                remote: row(4, ["title": "theirs", "body": "B", "color": "blue"]), dirty: ["title", "body"], resolver: name)
        }
        add(
            "two conflicts, reported by field name", base: base, local: row(3, ["title": "m", "body": "m", "color": "m"]),
            remote: row(4, ["title": "r", "body": "r", "color": "r"]), dirty: ["title", "color", "body"])
        add(
            "no base (the edits were made on a row the store never had from the server)", base: nil,
            local: row(nil, ["title": "mine", "body": "B"]), remote: row(4, ["title": "theirs", "body": "B"]), dirty: ["title"])
        add(
            "no base, the server has the local value", base: nil, local: row(nil, ["title": "same"]), remote: row(4, ["title": "same"]),
            dirty: ["title"])
        add(
            "a field set to null locally", base: base, local: row(3, ["title": "T", "body": nil, "color": "red"]),
            remote: row(4, ["title": "T", "body": "B", "color": "blue"]), dirty: ["body"])
        add(
            "a field set to null on the server, edited locally", base: base, local: row(3, ["title": "T", "body": "mine", "color": "red"]),
            remote: row(4, ["title": "T", "body": nil, "color": "red"]), dirty: ["body"])
        add(
            "a dirty field the server's row lacks", base: base, local: row(3, ["title": "T", "extra": "x"]),
            remote: row(4, ["title": "T"]), dirty: ["extra"])
        add(
            "a dirty field the local row lacks", base: base, local: row(3, ["title": "T"]),
            remote: row(4, ["title": "T", "body": "B9"]), dirty: ["body"])
        add(
            "numbers and flags", base: ["id": .string("r1"), "revision": .int(1), "n": .int(1), "done": .bool(false)],
            local: ["id": .string("r1"), "revision": .int(1), "n": .int(2), "done": .bool(true)],
            remote: ["id": .string("r1"), "revision": .int(2), "n": .int(3), "done": .bool(false)], dirty: ["n", "done"])
        add(
            "objects compare by value", base: ["id": .string("r1"), "meta": .object(["a": .int(1)])],
            local: ["id": .string("r1"), "meta": .object(["a": .int(2)])],
            remote: ["id": .string("r1"), "revision": .int(2), "meta": .object(["a": .int(2)])], dirty: ["meta"])
        return ConformanceFile(
            name: "merge.json",
            about:
                "FerryKit's field-by-field three-way merge (Sources/FerryKit/Merge/ThreeWayMerge.swift), generated by Tests/FerryKitUnitTests/Conformance/MergeCases.swift. base: the server version the local edits were made on (null: none); dirty: the locally edited fields not yet acknowledged. A field only one side changed takes that side's value; a field both changed differently is a conflict, local by default, else what the resolver returns (remote: the server's value; base: the base's; drop: no value, the field leaves the row; joined: local and remote strings joined by +). A missing key in a conflict is a value the side does not have. conflicts are sorted by field.",
            sections: [("cases", cases)])
    }

    static func feedFile() -> ConformanceFile {
        var cases: [JSONValue] = []
        func add(
            _ name: String, remote: RowData, pending: Bool, base: RowData? = nil, row: RowData? = nil, dirty: Set<String> = [],
            resolver: String? = nil
        ) {
            var local = RemoteDecision.Local(pending: pending)
            local.base = base.flatMap { b in b["revision"]?.int.map { ($0, b) } }
            local.row = row
            local.dirty = dirty
            let needs = RemoteDecision.needs(remote, pending: pending)
            let decision = RemoteDecision.decide(resource: "notes", id: "r1", remote: remote, local: local, resolver: Self.resolver(resolver))
            var o: [String: JSONValue] = [
                "name": .of(name), "remote": .object(remote),
                "local": .object(["pending": .of(pending), "base": .of(base), "row": .of(row), "dirty": .of(dirty.sorted())]),
                "needs": .of(
                    [needs.contains(.base) ? "base" : nil, needs.contains(.row) ? "row" : nil, needs.contains(.dirty) ? "dirty" : nil].compactMap {
                        $0
                    }),
                "expect": encode(decision),
            ]
            if let resolver { o["resolver"] = .of(resolver) }
            cases.append(.object(o))
        }
        let r3 = row(3, ["title": "T", "body": "B"])
        let r5 = row(5, ["title": "T5", "body": "B"])
        add("a row the store lacks, nothing pending: applied", remote: r5, pending: false)
        add("a newer row, nothing pending: applied (the store keeps the newer of the two)", remote: r5, pending: false, base: r3, row: r3)
        add("an older row, nothing pending: applied if newer (the store compares revisions on write)", remote: r3, pending: false, row: r5)
        add("a row without a revision: ignored", remote: ["id": .string("r1"), "title": .string("x")], pending: false)
        add(
            "an older revision than the base of pending edits: ignored", remote: r3, pending: true, base: r5,
            row: row(5, ["title": "mine", "body": "B"]), dirty: ["title"])
        add(
            "the same revision as the base: ignored", remote: r5, pending: true, base: r5, row: row(5, ["title": "mine", "body": "B"]),
            dirty: ["title"])
        add(
            "newer, pending edits of other fields: merged", remote: row(6, ["title": "T", "body": "B6"]), pending: true, base: r3,
            row: row(3, ["title": "mine", "body": "B"]), dirty: ["title"])
        add(
            "newer, both changed a field: conflict, local wins", remote: row(6, ["title": "theirs", "body": "B"]), pending: true, base: r3,
            row: row(3, ["title": "mine", "body": "B"]), dirty: ["title"])
        add(
            "newer, both changed a field, remote resolver", remote: row(6, ["title": "theirs", "body": "B"]), pending: true, base: r3,
            row: row(3, ["title": "mine", "body": "B"]), dirty: ["title"], resolver: "remote")
        add(
            "newer, pending create with no base: merged on no base", remote: row(1, ["title": "server", "body": "B"]), pending: true,
            row: row(nil, ["title": "mine", "body": "B"]), dirty: ["title", "body"])
        add("newer, deleted here with the delete pending: kept gone, becomes the base", remote: r5, pending: true, base: r3)
        add("a tombstone of a row the store has: removed", remote: row(6, deleted: true), pending: false, base: r5, row: r5)
        add("a tombstone of a row the store lacks: removed silently", remote: row(6, deleted: true), pending: false)
        add("a tombstone older than the base: ignored", remote: row(4, deleted: true), pending: false, base: r5, row: r5)
        add("a tombstone at the base's revision: ignored", remote: row(5, deleted: true), pending: false, base: r5, row: r5)
        add("a tombstone without a revision: removed", remote: row(nil, deleted: true), pending: false, base: r5, row: r5)
        add(
            "a tombstone of a row with pending edits: removed, edits rejected as gone", remote: row(6, deleted: true), pending: true, base: r5,
            row: row(5, ["title": "mine", "body": "B"]), dirty: ["title"])
        add("a revoked stub: removed, whatever its revision", remote: row(2, deleted: true, revoked: true), pending: false, base: r5, row: r5)
        add("a revoked stub without a revision", remote: row(nil, deleted: true, revoked: true), pending: false, row: r5)
        add(
            "a revoked stub with pending edits: removed, edits rejected as revoked", remote: row(nil, deleted: true, revoked: true), pending: true,
            base: r5, row: row(5, ["title": "mine", "body": "B"]), dirty: ["title"])
        add("a revoked stub of a row the store lacks: removed silently", remote: row(nil, deleted: true, revoked: true), pending: false)
        add("is_deleted false is a live row", remote: row(7, ["title": "live"], deleted: false), pending: false)
        return ConformanceFile(
            name: "feed.json",
            about:
                "What one server row (a feed entry, an Index row, a conflict's current) does to the local copy: FerryKit's RemoteDecision (Sources/FerryKit/Merge/RemoteDecision.swift), generated by Tests/FerryKitUnitTests/Conformance/MergeCases.swift. local: pending (operations of the row wait in the outbox), base (the server version the edits were made on), row (as the app sees it), dirty (edited fields). needs: what the store must read before deciding. expect.decision: ignore | apply (write it if newer than the stored row) | keep (the row stays deleted here; remote becomes the base) | merge (row, remote becomes the base) | conflict (row, conflicts; remote becomes the base) | remove (revoked; problem: what pending operations are rejected with, null when none wait; event: what the app hears, null when the store never had the row). Resolvers as in merge.json.",
            sections: [("cases", cases)])
    }

    static func encode(_ decision: RemoteDecision) -> JSONValue {
        switch decision {
        case .ignore: return .object(["decision": .of("ignore")])
        case .apply: return .object(["decision": .of("apply")])
        case .keep: return .object(["decision": .of("keep")])
        case .merge(let row): return .object(["decision": .of("merge"), "row": .object(row)])
        case .conflict(let row, let conflicts):
            return .object(["decision": .of("conflict"), "row": .object(row), "conflicts": encode(conflicts)])
        case .remove(let removal):
            var event: JSONValue = .null
            if case .removed(_, _, let revoked, let discarded, let localVersion)? = removal.event {
                event = .object(["removed": .object(["revoked": .of(revoked), "discardedEdits": .of(discarded), "localVersion": .of(localVersion)])])
            }
            let problem = removal.problem.flatMap { try? JSONValue.decode($0) } ?? .null
            return .object(["decision": .of("remove"), "revoked": .of(removal.revoked), "problem": problem, "event": event])
        }
    }
}
