import FerryHTTP
import FerryPostgres

/// One page of the feed, ready to answer.
struct ChangesPage {
    /// The changes, already JSON (`[{"resource", "data"}, ...]`), or nil when none.
    let changes: String?
    /// Whether entries below the frontier remain after this page.
    let hasMore: Bool
    /// Where the next page starts.
    let cursor: ChangeCursor
    /// The frontier the page was read below (0 when not asked).
    let frontier: UInt64
    /// Its answer's bytes, when many waiters take it as it is (``EncodedPage``).
    var encoded: EncodedPage?

    var isEmpty: Bool { changes == nil }

    /// An empty page: nothing after the cursor below `frontier`.
    init(emptyBelow frontier: UInt64, request: ChangesRequest) {
        changes = nil
        hasMore = false
        cursor = Self.frontierCursor(frontier, request: request)
        self.frontier = frontier
    }

    /// A page made of another's entries (``SharedStreamPage``).
    init(changes: String?, hasMore: Bool, cursor: ChangeCursor, frontier: UInt64) {
        self.changes = changes
        self.hasMore = hasMore
        self.cursor = cursor
        self.frontier = frontier
    }

    /// An empty page at the request's own cursor, told without asking
    /// PostgreSQL (a long poll answered at shutdown): true, and no progress.
    init(unchangedAt request: ChangesRequest) {
        changes = nil
        hasMore = false
        cursor = request.since
        frontier = 0
    }

    /// A page from the columns of ``ChangesPlan/statement``, read by name.
    init(_ result: PostgresResult, request: ChangesRequest) throws {
        let row = try ChangesPage.firstRow(result)
        guard let frontier = try row.uint64("frontier") else { throw Self.malformed }
        self.frontier = frontier
        // A purge may have passed the cursor since the activity check.
        try Self.refuseUnservedCursor(row)
        changes = try row.string("changes")
        hasMore = try row.int("count") ?? 0 > request.limit
        if hasMore {
            guard let next = try ChangeCursor.read(row) else { throw Self.malformed }
            cursor = next.continuing(from: request.since, frontier: frontier)
        } else {
            cursor = Self.frontierCursor(frontier, request: request)
        }
    }

    /// Everything below `frontier` is delivered. A frontier can come out
    /// below one handed out before (docs/changes-feed.md, "A frontier that
    /// falls back"): the client then stays where it already is, never sent
    /// back (`FrontierFallbackTests`).
    static func frontierCursor(_ frontier: UInt64, request: ChangesRequest) -> ChangeCursor {
        frontier > 0 && frontier - 1 >= request.since.afterXID ? ChangeCursor(afterXID: frontier - 1) : request.since
    }

    static func firstRow(_ result: PostgresResult) throws -> PostgresRow {
        guard let row = result.first else { throw malformed }
        return row
    }

    /// The 410 of a row whose `expired` or `ahead` column is true (the page
    /// statement's and the activity check's alike).
    static func refuseUnservedCursor(_ row: PostgresRow) throws {
        if try row.bool("expired") == true { throw expired }
        if try row.bool("ahead") == true { throw ahead }
    }

    /// 410: the client must start over with a full sync.
    static let expired = Problem(
        410, .cursorExpired,
        "the cursor is older than the tombstone retention; start a full sync without since")

    /// 410 too: a cursor from before a restore to an older point (or from
    /// another database) names transactions this database has not had. The
    /// same code, so that every client already starts over.
    static let ahead = Problem(
        410, .cursorExpired,
        "the cursor is ahead of this database (it was restored to an older point, or the cursor is another database's); "
            + "start a full sync without since")

    static let malformed = PostgresError(kind: .protocolError, message: "the changes statement returned an unexpected row")

    /// `{"changes": [...], "cursor": "...", "has_more": bool}`.
    var body: [UInt8] {
        JSONValue.object([
            ("changes", .raw(Array((changes ?? "[]").utf8))),
            ("cursor", .string(cursor.token)),
            ("has_more", .bool(hasMore)),
        ]).bytes
    }
}
