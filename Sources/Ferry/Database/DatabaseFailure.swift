import FerryHTTP
import FerryPostgres

/// How database errors become contract answers.
///
/// Infrastructure trouble is temporary (503 with `Retry-After`, the client
/// retries); a bad token is 401. Everything else is returned as a
/// `PostgresError` with `statementIndex` shifted to the caller's own list, so
/// each action can map constraint violations to 409 or 422 itself.
enum DatabaseFailure {
    static func map(_ error: PostgresError, statementOffset: Int) -> Error {
        if error.sqlState == "FR401" { return Problem.unauthorized() }
        switch error.kind {
        case .connection: return Problem.unavailable("the database is unavailable")
        case .poolTimeout: return Problem.unavailable("the database is busy")
        case .timeout: return Problem.unavailable("the database did not answer in time")
        default: break
        }
        switch error.sqlState {
        case "40001", "40P01": return Problem.unavailable("the request lost a race with another writer; retry it")
        case "57014": return Problem.unavailable("the statement timed out")
        // disk_full: its own code, because only an operator can end it (reads go on meanwhile).
        case "53100":
            return Problem(503, "storage_full", "the database is out of disk space; writes are refused until space is freed",
                           headers: HTTPHeaders([("Retry-After", "10")]))
        case let state? where state.hasPrefix("53") || state.hasPrefix("08") || state.hasPrefix("57P"):
            return Problem.unavailable("the database is unavailable")
        default:
            var shifted = error
            if let index = error.statementIndex { shifted.statementIndex = index - statementOffset }
            return shifted
        }
    }
}
