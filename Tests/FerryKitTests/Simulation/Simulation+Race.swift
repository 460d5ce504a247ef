@testable import FerryKit
import FerryPostgres
import FerryTestSupport
import Foundation

/// ``SimulationFault/revokedBeforeAnswer``'s revocation (issue 51): the set's
/// owner removes a collaborator just after the collaborator's update of the
/// set, or of one of its terms, reached the server.
extension Simulation {
    /// A revoker for `userID`'s devices: given an update (`PATCH
    /// /v1/<resource>/<id>`, or a bulk `PATCH /v1/<resource>` of rows with
    /// ids) or a new term (its body names its set), it marks `userID`'s collaborator row of the first named row's set
    /// deleted, as the owner's app does, and says whether there was one (a
    /// user's own set has none: nothing is revoked).
    func revoker(for userID: String) -> @Sendable (TransportRequest) -> Bool {
        let database = server.database
        let shared = schema.shared.name, child = schema.child, members = schema.members
        return { request in
            let parts = (request.path.split(separator: "?").first ?? "").split(separator: "/").map(String.init)
            guard parts.count >= 2, parts[0] == "v1", parts[1] == shared || parts[1] == child.name else { return false }
            var ids = parts.count == 3 ? [parts[2]] : []
            let body = request.body.flatMap { try? JSONValue.decode($0) }
            let items = body?.array ?? body.map { [$0] } ?? []
            if parts.count == 2 { ids = items.compactMap { $0.object?["id"]?.string } }
            // A new term names its set in its body.
            let bodySet = request.method == "POST" && parts[1] == child.name ? items.first?.object?[child.reference]?.string : nil
            guard let id = ids.first ?? bodySet, UUID(uuidString: id) != nil else { return false }
            guard let connection = try? database.connect() else { return false }
            defer { connection.close() }
            // Every name is the schema's, never input; the values are bound.
            var setID: String? = id
            if parts[1] == child.name, bodySet == nil {
                setID =
                    (try? connection.query("SELECT \(child.reference)::text FROM app.\(child.name) WHERE id = $1::uuid", [id]))?
                    .first?[0] ?? nil
            }
            guard let setID else { return false }
            let revoked: PostgresResult?
            do {
                revoked = try connection.query(
                    """
                    UPDATE app.\(members.name) SET is_deleted = true
                     WHERE \(members.scope) = $1::uuid AND \(members.user) = $2::uuid AND NOT is_deleted RETURNING id
                    """, [setID, userID])
            } catch {
                revoked = nil
            }
            return (revoked?.rows.count ?? 0) > 0
        }
    }
}
