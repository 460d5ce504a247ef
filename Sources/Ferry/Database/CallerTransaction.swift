import FerryPostgres

/// A caller's transaction held open across several round trips, for the
/// requests that cannot be one pipeline: a batch (each operation sees the
/// effects of the ones before it), an `Idempotency-Key` write (the stored
/// response must commit with the write it describes) and a server-computed
/// rank (FerryRank runs in Swift between reading the neighbours and writing).
///
/// It travels in the request's ``RequestScope``: while a ``Caller`` carries
/// one, `Database.asCaller` runs its statements inside it instead of opening
/// a transaction of its own, so the actions run unchanged inside a batch.
///
/// `@unchecked Sendable` because it wraps a non-Sendable connection: it is
/// created, used and dropped on the one thread that runs the request, inside
/// `Database.callerTransaction`'s body; no other thread ever sees it.
final class CallerTransaction: @unchecked Sendable {
    let connection: PostgresConnection
    /// The token hash the token check (`Database.tokenCheck`) identified the caller with.
    let tokenHash: String
    /// Set when a statement lost a serialization or deadlock race: the whole
    /// transaction is then rerun, whatever answer the request produced.
    private(set) var sawRetryableConflict = false
    /// Set when any statement failed: the transaction is aborted and can only roll back.
    private(set) var failed = false

    init(connection: PostgresConnection, tokenHash: String) {
        self.connection = connection
        self.tokenHash = tokenHash
    }

    /// Runs `statements` one round trip each (a pipeline would end the
    /// transaction), with errors mapped as `Database.asCaller` maps them.
    func run(_ statements: [PostgresStatement]) throws -> [PostgresResult] {
        var results: [PostgresResult] = []
        results.reserveCapacity(statements.count)
        for (index, statement) in statements.enumerated() {
            do {
                results.append(try connection.query(statement.sql, statement.params))
            } catch {
                failed = true
                if error.isRetryableConflict { sawRetryableConflict = true }
                var error = error
                error.statementIndex = index
                throw DatabaseFailure.map(error, statementOffset: 0)
            }
        }
        return results
    }
}

/// What a transaction body decides: commit or roll back, and the answer either way.
enum TransactionOutcome<Value> {
    case commit(Value)
    case rollback(Value)
}
