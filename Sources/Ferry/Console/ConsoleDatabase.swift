import FerryHTTP
import FerryPostgres

/// How the console reaches PostgreSQL: every statement through ``PostgresGateway``,
/// the same serve role (`ferry_app`, under Row Level Security) as any request.
///
/// - What an operator sees past Row Level Security comes only from
///   `ferry.console_*` functions (migration 0018), each of which checks the
///   console token's hash itself before it reads; the serve role has no other
///   way to them, and an app user's token is not a console token.
/// - What a user sees ("see as a user") is read by the user's own statements,
///   in a read-only transaction whose `ferry.user_id` the operator-checked
///   `ferry.console_act_as` set, exactly as the token check sets it for the
///   user's own requests; the transaction always rolls back.
struct ConsoleDatabase: Sendable {
    let database: PostgresGateway

    /// Runs `statements` after checking the console token (and, with `admin`,
    /// that its operator is an admin), in one transaction and one round trip;
    /// returns the operator and the statements' results. `answerLimit` shortens the
    /// wait for each of PostgreSQL's answers (a health probe's).
    func run(_ tokenHash: String, admin: Bool = false, _ statements: [PlannedStatement], answerLimit: Duration? = nil) throws
        -> (OperatorSession, [PostgresResult])
    {
        let results: [PostgresResult]
        do {
            results = try database.anonymous([OperatorSession.check(tokenHash, admin: admin)] + statements, answerLimit: answerLimit)
        } catch {
            throw OperatorSession.mapping(error)
        }
        return (try OperatorSession(results[0]), Array(results.dropFirst()))
    }

    /// Runs `body` as the user `userID` (a UUID), in a read-only transaction on
    /// one pooled connection that is rolled back at the end whatever `body`
    /// does. `body` gets the transaction to hand on (every `asCaller` of a
    /// request whose scope carries it joins it) and the user's name. Returns nil
    /// when there is no such user; 401 for a console token that is no longer live.
    func asUser<T>(_ userID: String, tokenHash: String, _ body: (CallerTransaction, String) throws -> T) throws -> T? {
        do {
            return try database.withMappedConnection { connection -> T? in
                let name: String?
                do {
                    try connection.execute("BEGIN READ ONLY")
                    name = try connection.run(
                        "SELECT ferry.console_act_as(\(bind: tokenHash)::bytea, \(bind: userID)::uuid) AS name" as SQLQuery
                    ).first?.string("name")
                } catch let error as PostgresError {
                    try? connection.execute("ROLLBACK")
                    throw DatabaseFailure.map(error, statementOffset: 0)
                }
                defer { try? connection.execute("ROLLBACK") }
                guard let name else { return nil }
                return try body(CallerTransaction(connection: connection, credential: .token(hash: tokenHash)), name)
            }
        } catch {
            throw OperatorSession.mapping(error)
        }
    }

    /// Appends an entry to `ferry.operator_audit`: the statement goes first in
    /// the pipeline of what it records, so nothing is read or written unrecorded.
    static func audit(
        _ tokenHash: String, action: String, target: [(String, JSONValue)], status: Int? = nil,
        requestID: String
    ) -> PlannedStatement {
        PlannedStatement(
            """
            SELECT ferry.console_audit(\(bind: tokenHash)::bytea, \(bind: action),
                   \(bind: .json(String(decoding: JSONValue.object(target).bytes, as: UTF8.self)))::jsonb,
                   \(bind: status.map { .int(Int64($0)) } ?? .null)::int, \(bind: requestID))
            """ as SQLQuery)
    }
}
