import FerryHTTP
import FerryPostgres
import Logging

/// Turns a Ferry handler, which throws ``Problem``s and database errors, into
/// a router handler that always answers: a Problem becomes its problem+json,
/// anything unexpected a logged 500 that reveals nothing.
struct RouteHandling: Sendable {
    typealias Handler = @Sendable (HTTPRequest, RequestContext) throws -> HTTPResponse

    let logger: Logger

    func callAsFunction(_ handler: @escaping Handler) -> Handler {
        let logger = logger
        return { request, context in
            do {
                return try handler(request, context)
            } catch let problem as Problem {
                return problem.response
            } catch let error as HTTPError {
                return .problem(error)
            } catch let error as PostgresError {
                logger.error("unmapped database error", metadata: [
                    "request_id": "\(context.requestID)", "sqlstate": "\(error.sqlState ?? "-")",
                    "error": "\(error.message)",
                ])
                return Problem(500, "internal_error", "the server failed; the request id is \(context.requestID)").response
            } catch {
                logger.error("unhandled error", metadata: ["request_id": "\(context.requestID)", "error": "\(error)"])
                return Problem(500, "internal_error", "the server failed; the request id is \(context.requestID)").response
            }
        }
    }
}
