import FerryHTTP
import Logging

/// Paged Index answers: page 1 with a snapshot, later pages from it.
///
/// Index plans its query (``PagedIndexQuery``) and hands it here with the caller's
/// token hash; every path is one PostgreSQL round trip (plus one memcached multi-get
/// for a later page). Errors are thrown as ``Problem``s; a bad bearer token always
/// wins (401), because every answer first runs through the caller's transaction.
public struct IndexPaging: Sendable {
    /// The serve database.
    public let database: PostgresGateway
    public let store: PagingSnapshotStore
    /// `Retry-After` of a 503 `paging_unavailable`, seconds.
    public let retryAfterSeconds: Int
    let logger: Logger
    /// memcached's failures, logged at most once per 5 s with a count of the ones held back.
    let storeWarnings = LogThrottle()

    public init(database: PostgresGateway, store: PagingSnapshotStore, retryAfterSeconds: Int, logger: Logger) {
        self.database = database
        self.store = store
        self.retryAfterSeconds = max(1, retryAfterSeconds)
        self.logger = logger
    }

    /// The page `request` asks for.
    ///
    /// - Parameters:
    ///   - request: The Index request (its `paging_token`, `page` and query are read).
    ///   - caller: Who asks, in which transaction.
    ///   - resource: The resource name (part of the binding).
    ///   - query: Index's planned query.
    ///   - limit: The page size, already validated by Index.
    ///   - canonicalQuery: The filters and order in canonical form; by default
    ///     ``PagingFingerprint/canonicalQuery(_:)`` of the request's query.
    ///   - notModified: Whether the client's validators match a page's ETag; when
    ///     they match page 1, no snapshot is stored.
    func page(
        request: HTTPRequest, caller: Caller, resource: String, query: PagedIndexQuery, limit: Int,
        canonicalQuery: String? = nil, notModified: (String) -> Bool = { _ in false }
    ) throws -> Answer {
        let paging = try PagingRequest(query: request.query)
        let binding = Binding(
            resource: resource, canonicalQuery: canonicalQuery ?? PagingFingerprint.canonicalQuery(request.query),
            limit: limit)
        if let token = paging.token {
            let page = try laterPage(
                request: request, caller: caller, token: token, page: paging.page, query: query, binding: binding)
            return notModified(page.etag) ? .notModified(etag: page.etag) : .page(page)
        }
        return try firstPage(request: request, caller: caller, query: query, binding: binding, notModified: notModified)
    }

    /// What a paged Index request answers.
    public enum Answer: Sendable {
        case page(IndexPage)
        /// The client's copy is current (304 with this ETag).
        case notModified(etag: String)
    }

    /// Everything a snapshot is bound to except the user, who is known only inside
    /// the caller's transaction.
    struct Binding {
        let resource: String
        let canonicalQuery: String
        let limit: Int

        func fingerprint(userID: String) -> PagingFingerprint {
            PagingFingerprint(userID: userID, resource: resource, canonicalQuery: canonicalQuery, limit: limit)
        }
    }

    /// Runs only the identity check: 401 for a bad token, else the caller's id.
    func callerID(_ caller: Caller) throws -> String {
        let results = try database.asCaller(caller, [PagingSQL.currentUser])
        return results.first?.first?["user_id"] ?? ""
    }
}
