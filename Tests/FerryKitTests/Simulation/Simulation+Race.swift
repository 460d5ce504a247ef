import FerryPostgres
import FerryTestSupport
import Foundation

/// ``SimulationFault/revokedBeforeAnswer``'s revocation (issue 51): the set's
/// owner removes a collaborator just after the collaborator's update of the
/// set, or of one of its terms, reached the server.
extension Simulation {
    /// A revoker for `userID`'s devices: given a write's path
    /// (`/v1/<resource>/<id>`), it marks `userID`'s collaborator row of the
    /// row's set deleted, as the owner's app does, and says whether there was one
    /// (a user's own set has none: nothing is revoked).
    func revoker(for userID: String) -> @Sendable (String) -> Bool {
        let database = server.database
        let shared = schema.shared.name, child = schema.child, members = schema.members
        return { path in
            let parts = (path.split(separator: "?").first ?? "").split(separator: "/").map(String.init)
            guard parts.count == 3, parts[0] == "v1", parts[1] == shared || parts[1] == child.name,
                  UUID(uuidString: parts[2]) != nil else { return false }
            guard let connection = try? database.connect() else { return false }
            defer { connection.close() }
            // Every name is the schema's, never input; the values are bound.
            var setID: String? = parts[2]
            if parts[1] == child.name {
                setID = (try? connection.query("SELECT \(child.reference)::text FROM app.\(child.name) WHERE id = $1::uuid", [parts[2]]))?
                    .first?[0] ?? nil
            }
            guard let setID else { return false }
            let revoked = try? connection.query("""
                UPDATE app.\(members.name) SET is_deleted = true
                 WHERE \(members.scope) = $1::uuid AND \(members.user) = $2::uuid AND NOT is_deleted RETURNING id
                """, [setID, userID])
            return (revoked?.rows.count ?? 0) > 0
        }
    }
}
