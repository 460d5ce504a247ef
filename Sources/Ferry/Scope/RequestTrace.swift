/// Facts about the request being answered that only code deep inside the
/// handler learns (who the caller is), handed back to the request observer
/// for the request log line. It travels in the request's ``RequestScope``.
///
/// `@unchecked Sendable` without a lock: ``MiddlewareChain`` creates it, hands
/// it down in the context, and reads it once `next` has returned, all on the
/// one thread that runs the request (a worker, or the I/O thread for an
/// inline route); a batch's operations run on that thread too. No other
/// thread ever sees it, so a lock here would only be made and torn down with
/// every request.
final class RequestTrace: @unchecked Sendable {
    /// The authenticated caller, once the token has been checked.
    var userID: String?
    /// A route label that overrides the router's pattern (a CORS preflight).
    var route: String?
}
