import FerryPostgres

/// The session-level advisory lock that makes concurrent `ferry migrate` runs take turns.
///
/// Held on a session of its own for the whole run, so that the transactions of the
/// migration session can begin, commit and roll back without touching it. Advisory locks
/// are per database, so runs against different databases never wait for each other.
final class MigrationLock {
    /// The lock key: the ASCII bytes of "ferrymig" as a big-endian Int64. Fixed, so that
    /// every Ferry version agrees on it.
    static let key: Int64 = 0x6665_7272_796D_6967

    private let connection: PostgresConnection

    private init(connection: PostgresConnection) {
        self.connection = connection
    }

    /// Opens a session and takes the lock, waiting for another run to finish if needed.
    ///
    /// - Parameters:
    ///   - timeout: seconds to wait before giving up; nil waits as long as it takes.
    ///   - onWait: called once, before waiting, when another session holds the lock.
    static func acquire(url: String, timeout: Double?, onWait: () -> Void) throws(MigrationError) -> MigrationLock {
        let connection: PostgresConnection
        do {
            connection = try PostgresConnection(url: url, applicationName: "ferry")
        } catch {
            throw .database(operation: "connecting to the database", error: error)
        }
        do {
            let tried = try connection.query("SELECT pg_try_advisory_lock(\(bind: key)::bigint) AS locked" as PostgresStatement)
            if try tried.first?.bool("locked") == true { return MigrationLock(connection: connection) }
            onWait()
            // lock_timeout bounds advisory lock waits as it does any other heavyweight lock.
            let milliseconds = timeout.map { max(1, Int(($0 * 1000).rounded())) } ?? 0
            _ = try connection.query("SELECT set_config('lock_timeout', \(bind: String(milliseconds)), false)" as PostgresStatement)
            _ = try connection.query("SELECT pg_advisory_lock(\(bind: key)::bigint)" as PostgresStatement)
            return MigrationLock(connection: connection)
        } catch {
            connection.close()
            if error.sqlState == "55P03" { throw .lockTimeout(seconds: timeout ?? 0) }
            throw .database(operation: "taking the migration lock", error: error)
        }
    }

    /// Releases the lock and closes its session (closing alone would also release it).
    func release() {
        _ = try? connection.query("SELECT pg_advisory_unlock(\(bind: Self.key)::bigint)" as PostgresStatement)
        connection.close()
    }
}
