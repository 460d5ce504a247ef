import FerryPostgres
import Logging

/// Ferry's way into PostgreSQL: every request is one pipelined transaction.
///
/// `asCaller` puts the token check (``tokenCheck``) first in the pipeline, so
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
        let results = try run([Self.tokenCheck(tokenHash)] + statements, offset: 1)
        // For the request log line: the token check returns the caller's id.
        RequestTrace.current?.userID = results.first?.first?[0]
        return Array(results.dropFirst())
    }

    /// The statement that starts every caller's transaction: it finds the live
    /// token with this hash, sets `ferry.user_id` (which Row Level Security
    /// reads) for the transaction and returns the user id; with no live token it
    /// raises FR401, which aborts the transaction before any other statement
    /// runs. A plain statement rather than a plpgsql function (the former
    /// `ferry.begin_request`): inside a function the lookup went through SPI and
    /// cost PostgreSQL ~7 % more per GET (migrations 0009 and 0010).
    static func tokenCheck(_ tokenHash: String) -> PostgresStatement {
        PostgresStatement("""
            SELECT COALESCE((SELECT pg_catalog.set_config('ferry.user_id', v.user_id::pg_catalog.text, true) \
            FROM ferry.live_tokens v WHERE v.token_hash = $1::pg_catalog.bytea), ferry.invalid_token())
            """, [tokenHash])
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
