import Foundation
import GRDB

/// What a refused create takes with it: rows made locally under it can never
/// reach the server, so they are refused at once, without a request each.
extension FerryStore {
    /// Rejects every row created locally (and not yet acknowledged) under the
    /// row `id` of `resource`, whose own create the server refused, and the rows
    /// under those, by the references of `GET /v1`. Each gets a problem with
    /// status 424 (Failed Dependency) and code `parent_rejected`, and leaves
    /// the local store as its parent did. Rows that do not depend on it are
    /// untouched.
    func rejectDependants(ofCreated resource: String, id: String) throws -> [(resource: String, id: String, problem: Data)] {
        try ferryWrite { db in
            guard let schema = try Self.schema(db) else { return [] }
            var rejected: [(resource: String, id: String, problem: Data)] = []
            var parents = [(resource, id)]
            while let (parent, parentID) = parents.popLast() {
                for child in schema.resources where try db.tableExists(child.name) {
                    for column in child.columns where column.references == parent {
                        let ids = try String.fetchAll(
                            db,
                            sql: """
                                SELECT t.id FROM \(LocalSchema.quote(child.name)) t
                                 WHERE t.\(LocalSchema.quote(column.name)) = ?
                                   AND EXISTS (SELECT 1 FROM ferry_outbox o WHERE o.resource = ? AND o.row_id = t.id
                                                  AND o.kind = ? AND \(OutboxState.waiting("o.state")))
                                """, arguments: [parentID, child.name, PendingOperation.Kind.create.rawValue])
                        for childID in ids {
                            let problem = JSONValue.object([
                                "code": .string("parent_rejected"), "status": .int(424), "field": .string(column.name),
                                "detail": .string("the \(parent) row \(parentID) it belongs to was refused by the server"),
                            ]).encoded()
                            try Self.transition(db, row: child.name, id: childID, .refused, error: problem)
                            try db.execute(sql: "DELETE FROM \(LocalSchema.quote(child.name)) WHERE id = ?", arguments: [childID])
                            rejected.append((child.name, childID, problem))
                            parents.append((child.name, childID))
                        }
                    }
                }
            }
            return rejected
        }
    }
}
