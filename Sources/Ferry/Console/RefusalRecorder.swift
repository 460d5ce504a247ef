import Dispatch
import FerryBase
import FerryHTTP
import Logging

/// Remembers, per user, the writes and feed polls Ferry refused (status 400
/// and above, 401 included), with their problem+json, so that the console's
/// "see as a user" can show why a device is stuck.
///
/// A middleware step: an answered request costs one comparison of its status.
/// A refusal is copied into a bounded in-memory queue, and a background flush
/// (at most every ``flushDelay``) writes the queue in one statement,
/// `ferry.record_refusals`, which keeps the newest 50 per user (migration 0018
/// says why a table). The refused request never waits for it; past
/// ``capacity`` queued entries, refusals are dropped and counted, so a client
/// looping on a refused write cannot grow memory or the database's load.
///
/// The user: the one the request's trace learned, else the owner of the
/// request's token, found by its hash in the database (a refused write's
/// token check never reports the user back, and a revoked token's 401 is
/// worth showing: that device is signed out).
struct RefusalRecorder: Middleware {
    let queue: RefusalQueue

    func respond(to request: HTTPRequest, context: RequestContext, next: Next) throws -> HTTPResponse {
        let response = try next(request, context)
        if response.status >= 400 { queue.note(request, response, context) }
        return response
    }
}

/// The queue behind ``RefusalRecorder`` and its flush.
final class RefusalQueue: Sendable {
    /// Most entries held between flushes.
    static let capacity = 1_000
    /// The longest a refusal waits to be written.
    static let flushDelay: DispatchTimeInterval = .milliseconds(200)
    /// The largest problem body kept.
    static let maxProblemBytes = 4_096

    private struct State {
        var pending: [JSONValue] = []
        var scheduled = false
        var dropped = 0
    }

    private let database: PostgresGateway
    private let logger: Logger
    private let state = Locked(State())
    private let warnings = LogThrottle()

    init(database: PostgresGateway, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    /// Whether a refused request is one the console shows: a write to a
    /// resource or a batch, or a poll of the changes feed.
    static func isRecorded(_ request: HTTPRequest) -> Bool {
        let path = request.path
        guard path.hasPrefix("/v1/") else { return false }
        if path == "/v1/changes" { return true }
        return RouteHandling.writeMethods.contains(request.method) && !path.hasPrefix("/v1/auth/") && path != "/v1/users"
    }

    /// Queues a refused request (if it is one the console shows and has a caller).
    func note(_ request: HTTPRequest, _ response: HTTPResponse, _ context: RequestContext) {
        guard Self.isRecorded(request) else { return }
        let user = context.scope.trace?.userID
        let tokenHash = user == nil ? BearerToken.from(request).map(BearerToken.hash) : nil
        guard user != nil || tokenHash != nil else { return }
        var problem = JSONValue.null
        if case .bytes(let bytes) = response.body, bytes.count <= Self.maxProblemBytes,
            response.headers["Content-Type"]?.contains("json") == true, bytes.first == UInt8(ascii: "{")
        {
            problem = .raw(bytes)
        }
        // The feed's cursor says where the device stood: its query is kept; a write's path is enough.
        let path = request.path == "/v1/changes" ? request.target : request.path
        let entry = JSONValue.object([
            ("user_id", user.map { .string($0) } ?? .null), ("token_hash", tokenHash.map { .string($0) } ?? .null),
            ("at", .int(Int(TokenCache.wallClockMs()))), ("method", .string(request.method)),
            ("path", .string(String(path.prefix(1024)))), ("status", .int(response.status)), ("problem", problem),
            ("request_id", .string(context.requestID)),
        ])
        let schedule = state.withLock { state -> Bool in
            guard state.pending.count < Self.capacity else {
                state.dropped += 1
                return false
            }
            state.pending.append(entry)
            defer { state.scheduled = true }
            return !state.scheduled
        }
        if schedule {
            DispatchQueue.global().asyncAfter(deadline: .now() + Self.flushDelay) { [self] in flush() }
        }
    }

    /// Writes what is queued, now.
    func flush() {
        let (entries, dropped) = state.withLock { state in
            defer {
                state.pending = []
                state.scheduled = false
                state.dropped = 0
            }
            return (state.pending, state.dropped)
        }
        guard !entries.isEmpty else { return }
        do {
            _ = try database.anonymous([
                PlannedStatement(
                    "SELECT ferry.record_refusals(\(bind: .json(String(decoding: JSONValue.array(entries).bytes, as: UTF8.self)))::jsonb)"
                        as SQLQuery)
            ])
            if dropped > 0, let held = warnings.admit() {
                logger.warning(
                    "refused requests not recorded: the queue was full",
                    metadata: ["dropped": "\(dropped)", "held_back": "\(held)"])
            }
        } catch {
            if let held = warnings.admit() {
                logger.warning(
                    "refused requests not recorded",
                    metadata: [
                        "error": "\(error)", "entries": "\(entries.count)", "held_back": "\(held)",
                    ])
            }
        }
    }
}
