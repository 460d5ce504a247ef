import FerryPostgres
import Logging

/// Ferry's way into PostgreSQL: every request is one pipelined transaction.
///
/// `asCaller` puts `ferry.begin_request(token_hash)` first in the pipeline, so
/// the token check, the caller's identity for Row Level Security, the action's
/// statements and the commit travel in one round trip. A bad token raises
/// inside that transaction, which aborts everything after it.
public final class Database: Sendable {
    /// The serve pool (the RLS-subject role).
    public let pool: PostgresPool
    /// How many times a transaction that lost a serialization or deadlock race is rerun.
    public let maxRetries: Int

    /// A database over `pool`.
    public init(pool: PostgresPool, maxRetries: Int = 3) {
        self.pool = pool
        self.maxRetries = maxRetries
    }

    /// Runs `statements` as the caller that `tokenHash` identifies, in one
    /// transaction and one round trip. Returns the statements' results (the
    /// token check's own result is dropped).
    /// Inside a bound ``CallerTransaction`` (a batch, an idempotent write) the
    /// statements join that transaction instead, one round trip each.
    public func asCaller(tokenHash: String, _ statements: [PostgresStatement]) throws -> [PostgresResult] {
        if let transaction = CallerTransaction.current {
            guard transaction.tokenHash == tokenHash else { throw Problem.unauthorized("one transaction, one caller") }
            return try transaction.run(statements)
        }
        let begin = PostgresStatement("SELECT ferry.begin_request($1::bytea)", [tokenHash])
        let results = try run([begin] + statements, offset: 1)
        // For the request log line: begin_request returns the caller's id.
        RequestTrace.current?.userID = results.first?.first?[0]
        return Array(results.dropFirst())
    }

    /// Runs `statements` with no caller identity (sign-in, sign-up), in one transaction.
    public func anonymous(_ statements: [PostgresStatement]) throws -> [PostgresResult] {
        try run(statements, offset: 0)
    }

    private func run(_ statements: [PostgresStatement], offset: Int) throws -> [PostgresResult] {
        var attempt = 0
        while true {
            do {
                // No BEGIN/COMMIT: everything up to the pipeline's sync point is already one
                // implicit transaction; BEGIN and COMMIT would be two more statements to run.
                return try pool.withConnection { connection in try connection.pipeline(statements, transaction: false) }
            } catch let error as PostgresError {
                if error.isRetryableConflict, attempt < maxRetries {
                    attempt += 1
                    continue
                }
                throw DatabaseFailure.map(error, statementOffset: offset)
            }
        }
    }
}

extension PostgresError {
    /// A serialization failure or deadlock: the transaction lost a race and may simply run again.
    var isRetryableConflict: Bool { sqlState == "40001" || sqlState == "40P01" }
}
