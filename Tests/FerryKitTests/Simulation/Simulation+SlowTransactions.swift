import FerryPostgres
@testable import FerryKitTestSupport
import FerryTestSupport
import Foundation

/// Transactions of the database that are not Ferry's and not the devices'
/// (issue 47's faults): a job opens a transaction and takes an xid without
/// writing any synced row (a write to a table that is not synced), keeps it
/// open across several of the seed's operations while the devices sync, and
/// then either ends it, or writes a synced row late: one field of a set the
/// devices made, recorded as the writer "job" in the model the checks use,
/// then commits. Since core 0032 the feed passes such a transaction while it
/// has written nothing synced, so its late row must be stamped above every
/// cursor the devices already hold; a feed that lost it would leave devices
/// with the field's older value, which the final check sees as a divergence
/// (and did, with the stamp made the bare xid again: 0032's floor ignored).
extension Simulation {
    /// One job's open transaction, and the step it began at.
    final class SlowTransaction {
        let connection: PostgresConnection
        let began: Int
        init(connection: PostgresConnection, began: Int) {
            self.connection = connection
            self.began = began
        }
    }

    /// The slow-transaction step: open one when none is open; otherwise, once
    /// it has lasted three steps or more, end it (a late synced write, a plain
    /// commit, or a rollback); else leave it running.
    func slowTransactionStep(step: Int) async throws {
        guard let open = slowTransaction else {
            let connection = try await Self.harnessStatement { try server.database.connect() }
            try connection.execute("BEGIN")
            _ = try connection.query("CREATE TEMP TABLE IF NOT EXISTS sim_job (a int)")
            _ = try connection.query("INSERT INTO sim_job VALUES (1)")
            slowTransaction = SlowTransaction(connection: connection, began: step)
            report.slowTransactions += 1
            note("\(step) a job takes an xid and stays open")
            return
        }
        guard step - open.began >= 2 else { return }
        try await endSlowTransaction(step: step, lateWrite: random.chance(0.8))
    }

    /// Ends the open job: with `lateWrite`, after restamping one of the sets
    /// the devices created (a synced write after a long pause).
    func endSlowTransaction(step: Int, lateWrite: Bool) async throws {
        guard let open = slowTransaction else { return }
        slowTransaction = nil
        defer { open.connection.close() }
        if lateWrite, !createdShared.isEmpty {
            let field = schema.shared.fields[schema.shared.fields.count - 1]
            let value = "\(field) job \(step)"
            // One of the sets the devices made that the server holds (some are
            // not uploaded yet), chosen by the seed.
            let updated = try open.connection.query(
                """
                UPDATE app.\(schema.shared.name) SET \(field) = $2
                 WHERE id = (SELECT s.id FROM app.\(schema.shared.name) s WHERE s.id::text = ANY (string_to_array($1, ','))
                              ORDER BY md5(s.id::text || $3) LIMIT 1)
                RETURNING id::text
                """, [createdShared.joined(separator: ","), value, String(random.next())])
            try open.connection.execute("COMMIT")
            guard let set = updated.rows.first?[0] else {
                note("\(step) the job finds none of the sets on the server and commits")
                return
            }
            writes[FieldKey(resource: schema.shared.name, id: set, field: field), default: []].append(("job", .string(value)))
            report.lateWrites += 1
            note("\(step) the job writes set \(set.prefix(8)) and commits, \(step - open.began) steps late")
        } else if random.chance(0.5) {
            try open.connection.execute("COMMIT")
            note("\(step) the job commits, having written nothing synced")
        } else {
            try open.connection.execute("ROLLBACK")
            note("\(step) the job rolls back")
        }
    }
}
