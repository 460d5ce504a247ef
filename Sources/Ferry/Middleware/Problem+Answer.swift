import FerryHTTP
import FerryPostgres
import Logging

extension Problem {
    /// The answer to any error a handler or a middleware step throws: the one
    /// mapping from errors to problem+json. A ``Problem`` answers itself; an
    /// `HTTPError` answers as the HTTP layer's refusal would; anything else is a
    /// logged 500 that reveals nothing but the request id.
    static func answer(for error: any Error, context: RequestContext, logger: Logger) -> HTTPResponse {
        switch error {
        case let problem as Problem:
            return problem.response
        case let error as HTTPError:
            return Problem(refusal: error).response
        case let error as PostgresError:
            logger.error(
                "unmapped database error",
                metadata: [
                    "request_id": "\(context.requestID)", "sqlstate": "\(error.sqlState ?? "-")", "error": "\(error.message)",
                ])
        default:
            logger.error("unhandled error", metadata: ["request_id": "\(context.requestID)", "error": "\(error)"])
        }
        return Problem(500, .internalError, "the server failed; the request id is \(context.requestID)").response
    }
}
