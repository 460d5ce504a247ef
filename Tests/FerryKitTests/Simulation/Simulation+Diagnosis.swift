@testable import FerryKit
import FerryPostgres
import Foundation
import GRDB

/// What each side knows of a row two sides disagree on, so that a failure
/// seen once in thousands of seeds can be explained from its report alone
/// (most do not replay: the server's timing is part of the interleaving).
extension Simulation {
    func diagnose(_ device: SimulatedDevice, _ resource: String, _ id: String) -> String {
        var lines = ["  \(device.name)'s \(resource) \(id):"]
        lines.append(
            "    state \((try? device.store.state(resource, id: id).rawValue) ?? "?"); local row \(describe(try? device.store.row(resource, id: id)))"
        )
        let local: (base: String, outbox: [String]) =
            (try? device.store.database.read { db in
                let base = try Row.fetchOne(db, sql: "SELECT revision, row FROM ferry_base WHERE resource = ? AND id = ?", arguments: [resource, id])
                let outbox = try Row.fetchAll(
                    db,
                    sql:
                        "SELECT sequence, op_id, kind, fields, state, attempts, last_error FROM ferry_outbox WHERE resource = ? AND row_id = ? ORDER BY sequence",
                    arguments: [resource, id])
                return (
                    base.map { "revision \($0["revision"] as Int64? ?? -1) \($0["row"] as String? ?? "")" } ?? "none",
                    outbox.map {
                        "\($0["sequence"] as Int64? ?? 0) \($0["kind"] as String? ?? "") \($0["fields"] as String? ?? "") \($0["state"] as String? ?? "") attempts \($0["attempts"] as Int? ?? 0) \($0["last_error"] as String? ?? "")"
                    }
                )
            }) ?? ("unreadable", [])
        lines.append("    base \(local.base)")
        lines += local.outbox.map { "    outbox \($0)" }
        for event in device.events {
            switch event {
            case .rejected(let r, let i, let status, let problem) where r == resource && i == id:
                lines.append("    event rejected \(status) \(String(decoding: problem, as: UTF8.self))")
            case .removed(let r, let i, let revoked, let discarded, _) where r == resource && i == id:
                lines.append("    event removed revoked \(revoked) discardedEdits \(discarded)")
            case .conflict(let r, let i, let conflicts) where r == resource && i == id:
                lines.append("    event conflict \(conflicts.map(\.field))")
            default: break
            }
        }
        lines += serverSide(resource, id).map { "    server \($0)" }
        return lines.joined(separator: "\n")
    }

    private func describe(_ row: RowData?) -> String {
        guard let row else { return "none" }
        return row.keys.sorted().map { "\($0)=\(row[$0].map { "\($0)" } ?? "")" }.joined(separator: " ")
    }

    /// The row as the database owner sees it (tombstones and all), and for a
    /// term or a share, its set and the set's collaborators (a todo or a member:
    /// its list and the list's members).
    private func serverSide(_ resource: String, _ id: String) -> [String] {
        guard resources.contains(resource) else { return [] }
        // The column naming the shared row each resource belongs to.
        var scope = [schema.child.name: schema.child.reference, schema.members.name: schema.members.scope]
        if let link = schema.link { scope[link.name] = link.shared }
        do {
            let connection = try server.database.connect()
            defer { connection.close() }
            var out: [String] = []
            // Every name is the schema's, never input.
            let row = try connection.query("SELECT row_to_json(t)::text FROM app.\(resource) t WHERE id = $1::uuid", [id])
            out.append("row \(row.first?[0] ?? "none")")
            let setID =
                try scope[resource].map { column in
                    try connection.query("SELECT row_to_json(t)->>$2 FROM app.\(resource) t WHERE id = $1::uuid", [id, column]).first?[0] ?? nil
                } ?? (resource == schema.shared.name ? id : nil)
            if let setID {
                if resource != schema.shared.name {
                    let set = try connection.query("SELECT row_to_json(s)::text FROM app.\(schema.shared.name) s WHERE id = $1::uuid", [setID])
                    out.append("set \(set.first?[0] ?? "none")")
                }
                let members = schema.members
                let shares = try connection.query(
                    "SELECT row_to_json(c)::text FROM app.\(members.name) c WHERE \(members.scope) = $1::uuid ORDER BY last_modified",
                    [setID])
                out += shares.rows.map { "share \($0[0] ?? "")" }
            }
            let users = try connection.query("SELECT id::text, name FROM ferry.users WHERE name LIKE $1", ["sim\(seed)u%"])
            out.append("users " + users.rows.map { "\($0[1] ?? "")=\($0[0] ?? "")" }.joined(separator: " "))
            return out
        } catch {
            return ["unreadable: \(error)"]
        }
    }
}
