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
                if let hints = statement.rowHints { recordRowHints(hints.hints(in: result)) }
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
