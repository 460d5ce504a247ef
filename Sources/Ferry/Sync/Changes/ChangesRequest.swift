import FerryHTTP

/// `GET /v1/changes?since=&limit=&resources=`, parsed and checked without
/// touching the database. Anything malformed is 400 `invalid_query`.
public struct ChangesRequest: Sendable, Equatable {
    /// Page size when `limit` is absent.
    public static let defaultLimit = 500
    /// The largest accepted `limit`.
    public static let maxLimit = 5_000

    /// Where to continue from (``ChangeCursor/start`` for a full sync).
    public let since: ChangeCursor
    /// Whether the request carried a non-empty `since`.
    public private(set) var hasSince: Bool
    /// `since=now`: no changes, only the cursor of this moment. A client that
    /// fills its store from Index pages takes this cursor first and then
    /// follows the feed from it, instead of reading the whole history through
    /// the feed (each page of which walks everyone's changes since the start).
    public let startsNow: Bool
    /// At most this many changes in the answer.
    public let limit: Int
    /// The resources to follow, unique, in ``ChangeOrder`` order.
    public let resources: [String]
    /// Whether `resources` was given (else every resource is followed, now and after a schema change).
    public let namesResources: Bool
    /// `wait=S`: hold the request up to S seconds until something is in the feed (a long poll).
    public let wait: Int?
    /// `Accept: text/event-stream`: answer with a stream of pages (server-sent events).
    public let stream: Bool
    /// `stream=<name>:<id>`: the feed of one subscription (a row of a stream's
    /// scope and what hangs from it, public rows included) instead of the
    /// default stream. ``ChangesRoutes`` resolves the name.
    public let subscription: StreamSubscription?

    /// A request from its parts (already valid).
    init(
        since: ChangeCursor, limit: Int, resources: [String], namesResources: Bool = false, wait: Int? = nil, stream: Bool = false,
        subscription: StreamSubscription? = nil, startsNow: Bool = false
    ) {
        self.since = since
        hasSince = !since.isStart
        self.startsNow = startsNow
        self.limit = limit
        self.resources = resources
        self.namesResources = namesResources
        self.wait = wait
        self.stream = stream
        self.subscription = subscription
    }

    /// The same request going on after `cursor` (an event stream's next part).
    func continuing(after cursor: ChangeCursor) -> ChangesRequest {
        ChangesRequest(
            since: cursor, limit: limit, resources: resources, namesResources: namesResources, wait: wait, stream: stream,
            subscription: subscription)
    }

    /// The same request reading only `tables` (a subscription's), of those it names.
    func following(_ tables: [String]) -> ChangesRequest {
        var copy = ChangesRequest(
            since: since, limit: limit, resources: resources.filter(tables.contains), namesResources: true,
            wait: wait, stream: stream, subscription: subscription, startsNow: startsNow)
        copy.hasSince = hasSince
        return copy
    }

    /// The resources a waiter follows, for the hints that wake it: nil for all.
    var followedResources: Set<String>? { namesResources ? Set(resources) : nil }

    /// Parses the query against the resources in `catalog`.
    public init(_ request: HTTPRequest, catalog: SchemaCatalog) throws {
        var since = ChangeCursor.start
        var hasSince = false
        var startsNow = false
        var limit = Self.defaultLimit
        var resources = catalog.names.sorted(by: ChangeOrder.precedes)
        var namesResources = false
        var wait: Int?
        var subscription: StreamSubscription?
        var seen: Set<String> = []
        for (name, value) in request.query {
            guard seen.insert(name).inserted else { throw Self.invalid("\(name) is given more than once") }
            switch name {
            case "since":
                if value == "now" {
                    startsNow = true
                } else if !value.isEmpty {
                    guard let cursor = ChangeCursor(token: value) else {
                        throw Self.invalid("since is not a cursor this server gave out; start over without since")
                    }
                    since = cursor
                    hasSince = true
                }
            case "limit":
                guard let n = QueryInteger.parse(value), n >= 1, n <= Self.maxLimit else {
                    throw Self.invalid("limit must be an integer from 1 to \(Self.maxLimit)")
                }
                limit = n
            case "resources":
                let names = value.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                guard !names.isEmpty, names.allSatisfy({ !$0.isEmpty }) else {
                    throw Self.invalid("resources is a comma-separated list of resource names")
                }
                for name in names where catalog[name] == nil {
                    throw Self.invalid("no resource named \(name.prefix(64))")
                }
                resources = Set(names).sorted(by: ChangeOrder.precedes)
                namesResources = true
            case "wait":
                guard let seconds = QueryInteger.parse(value) else {
                    throw Self.invalid("wait must be a whole number of seconds, 0 or more")
                }
                wait = seconds
            case "stream":
                guard let parsed = StreamSubscription(value) else {
                    throw Self.invalid("stream is <stream name>:<id>, the name lower-case letters, digits and _")
                }
                subscription = parsed
            default:
                throw Self.invalid("unknown query parameter \(name.prefix(64)); use since, limit, resources, wait and stream")
            }
        }
        let stream = Self.acceptsEventStream(request.headers.values("Accept"))
        // An event source reconnecting sends the id of the last event it received (to
        // the URL it first asked, `since` and all): it goes on from there.
        if let lastEventID = request.headers["Last-Event-ID"], !lastEventID.isEmpty {
            guard let cursor = ChangeCursor(token: lastEventID) else {
                throw Self.invalid("Last-Event-ID is not a cursor this server gave out; start over without it")
            }
            since = cursor
            hasSince = true
            startsNow = false
        }
        self.since = since
        self.hasSince = hasSince
        self.startsNow = startsNow
        self.limit = limit
        self.resources = resources
        self.namesResources = namesResources
        self.wait = wait
        self.stream = stream
        self.subscription = subscription
    }

    /// Whether an `Accept` field asks for `text/event-stream` (with a q-value above 0).
    static func acceptsEventStream(_ values: [String]) -> Bool {
        // What an EventSource sends, on every wake of its stream: told without splitting it.
        if values.count == 1, values[0] == "text/event-stream" { return true }
        for value in values {
            for member in value.split(separator: ",") {
                let parts = member.split(separator: ";").map { Self.trimmed($0).lowercased() }
                guard parts.first == "text/event-stream" else { continue }
                let refused = parts.dropFirst().contains { parameter in
                    let pair = parameter.split(separator: "=", maxSplits: 1).map { Self.trimmed($0) }
                    return pair.count == 2 && pair[0] == "q" && (Double(pair[1]) ?? 1) <= 0
                }
                if !refused { return true }
            }
        }
        return false
    }

    private static func trimmed(_ text: Substring) -> Substring {
        var text = text
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }

    static func invalid(_ detail: String) -> Problem { Problem(400, .invalidQuery, detail) }
}
