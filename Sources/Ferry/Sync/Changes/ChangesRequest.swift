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
    public let hasSince: Bool
    /// `since=now`: no changes, only the cursor of this moment. A client that
    /// fills its store from Index pages takes this cursor first and then
    /// follows the feed from it, instead of reading the whole history through
    /// the feed (each page of which walks everyone's changes since the start).
    public let startsNow: Bool
    /// At most this many changes in the answer.
    public let limit: Int
    /// The resources to follow, unique, in ``ChangeOrder`` order.
    public let resources: [String]

    /// A request from its parts (already valid).
    init(since: ChangeCursor, limit: Int, resources: [String]) {
        self.since = since
        hasSince = !since.isStart
        startsNow = false
        self.limit = limit
        self.resources = resources
    }

    /// Parses the query against the resources in `catalog`.
    public init(_ request: HTTPRequest, catalog: SchemaCatalog) throws {
        var since = ChangeCursor.start
        var hasSince = false
        var startsNow = false
        var limit = Self.defaultLimit
        var resources = catalog.names.sorted(by: ChangeOrder.precedes)
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
                guard value.utf8.count <= 9, let n = Int(value), n >= 1, n <= Self.maxLimit else {
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
            default:
                throw Self.invalid("unknown query parameter \(name.prefix(64)); use since, limit and resources")
            }
        }
        self.since = since
        self.hasSince = hasSince
        self.startsNow = startsNow
        self.limit = limit
        self.resources = resources
    }

    static func invalid(_ detail: String) -> Problem { Problem(400, "invalid_query", detail) }
}
