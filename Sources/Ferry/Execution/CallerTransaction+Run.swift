import FerryPostgres

extension CallerTransaction {
    /// Runs `statements` one round trip each (a pipeline would end the
    /// transaction), with errors mapped as `PostgresGateway.asCaller` maps them.
    func run(_ statements: [PlannedStatement]) throws -> [PostgresResult] {
        var results: [PostgresResult] = []
        results.reserveCapacity(statements.count)
        for (index, statement) in statements.enumerated() {
            do {
                let sent = statement.postgres
                let result = try connection.query(sent.sql, sent.params)
                if let hints = statement.rowHints {
                    recordRowHints(hints.hints(in: result))
                    // A one-row UPDATE that wrote nothing may leave its mark for the next write (``RowHints/unmark``).
                    if result.rows.isEmpty {
                        let unmark = RowHints.unmark.postgres
                        _ = try connection.query(unmark.sql, unmark.params)
                    }
                }
                results.append(result)
            } catch {
                recordFailure(retryable: error.isRetryableConflict)
                var error = error
                error.statementIndex = index
                throw DatabaseFailure.map(error, statementOffset: 0)
            }
        }
        return results
    }
}
