import FerryPostgres

extension Database {
    /// Runs `body` in one transaction as `caller`, on one pooled connection.
    /// `body` gets the transaction, and hands it on (in its ``RequestScope``)
    /// to whatever it runs, so that every `asCaller` inside joins it.
    ///
    /// `body` decides whether to commit. A transaction in which a statement
    /// failed is never committed, whatever `body` says. When a statement lost
    /// a serialization or deadlock race, `body` runs again from the start (up
    /// to ``maxRetries`` times), so it must have no effects outside the database.
    /// When the caller has a transaction open already, `body` simply joins it
    /// (the outermost owner commits).
    func callerTransaction<T>(_ caller: Caller, _ body: (CallerTransaction) throws -> TransactionOutcome<T>) throws -> T {
        let tokenHash = caller.tokenHash
        if let current = caller.transaction {
            switch try body(current) {
            case .commit(let value), .rollback(let value): return value
            }
        }
        var attempt = 0
        while true {
            var retry = false
            let value: T? = try withMappedConnection { connection in
                do throws(PostgresError) {
                    try connection.execute("BEGIN")
                    let check = Database.tokenCheck(tokenHash)
                    _ = try connection.query(check.sql, check.params)
                } catch {
                    throw DatabaseFailure.map(error, statementOffset: 0)
                }
                let transaction = CallerTransaction(connection: connection, tokenHash: tokenHash)
                // The pool rolls back a transaction left open, also when `body` throws.
                let outcome = try body(transaction)
                if transaction.sawRetryableConflict, attempt < maxRetries {
                    retry = true
                    try? connection.execute("ROLLBACK")
                    return nil
                }
                switch outcome {
                case .commit(let value) where !transaction.failed:
                    do {
                        let commit = try connection.query("COMMIT")
                        if commit.commandTag == "ROLLBACK" {
                            throw Problem(500, "internal_error", "the transaction was rolled back at commit")
                        }
                    } catch let error as PostgresError {
                        if error.isRetryableConflict, attempt < maxRetries {
                            retry = true
                            return nil
                        }
                        throw DatabaseFailure.map(error, statementOffset: 0)
                    }
                    return value
                case .commit(let value), .rollback(let value):
                    try? connection.execute("ROLLBACK")
                    return value
                }
            }
            if retry {
                attempt += 1
                continue
            }
            if let value { return value }
        }
    }

    /// A pooled connection for `body`, with a failure of the pool itself (no
    /// connection to be had while PostgreSQL is down, or none free in time)
    /// mapped like any other database failure: a 503, not an unmapped error and
    /// a 500. What `body` throws was mapped already, and mapping is idempotent.
    func withMappedConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        do {
            return try pool.withConnection(body)
        } catch let error as PostgresError {
            throw DatabaseFailure.map(error, statementOffset: 0)
        }
    }
}
