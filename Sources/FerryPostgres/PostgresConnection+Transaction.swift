// Transactions on one connection: `transaction { }` between BEGIN and COMMIT.

import CLibPQ

extension PostgresConnection {
    /// Runs `body` between BEGIN and COMMIT, rolling back when `body` or COMMIT throws.
    ///
    /// Nested calls throw `.protocolError` instead of silently committing the outer
    /// transaction. If a statement inside `body` failed and `body` swallowed the error, the
    /// server turns COMMIT into a rollback; that is reported as an error (SQLSTATE 25P02)
    /// rather than as success.
    public func transaction<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        let handle = try liveHandle()
        guard PQtransactionStatus(handle) == PQTRANS_IDLE else {
            throw PostgresError(kind: .protocolError, message: "transaction() called inside an open transaction")
        }
        try execute("BEGIN")
        do {
            let value = try body(self)
            let commit = try query("COMMIT")
            if commit.commandTag == "ROLLBACK" {
                throw PostgresError(
                    kind: .server,
                    message: "transaction was rolled back at COMMIT because a statement in it failed",
                    sqlState: "25P02"
                )
            }
            return value
        } catch {
            rollbackIfNeeded()
            throw error
        }
    }
}
