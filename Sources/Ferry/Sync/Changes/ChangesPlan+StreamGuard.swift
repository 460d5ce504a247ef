import FerryPostgres

/// What a stream's check asks beside its page so that the waiters of other
/// users may take the page instead of a check each (``StreamChecks``, issue
/// 46 "One query per change"): whether the caller reads the root row, whether
/// anything that decides who reads it changed since the cursor, and which
/// users have access grants or revocations since the cursor (core 0030).
///
/// A stream's page holds the rows read through its root row, which every
/// reader of the root reads alike (the rules' paths cover the policies
/// exactly), and the caller's own grants and revocations of the root. So two
/// readers of the root with none of those since the cursor get the same page.
/// Who reads the root changes only by a write of the root row (its owner, its
/// public flag), a public grant or revocation of it, or an access grant or
/// revocation (its members): the guard reads all three after the cursor's
/// xid, in a snapshot that sees all the page's did: taken after the page's,
/// or the page's own when the page is empty (the activity check's,
/// ``guardedActivityStatement``).
///
/// After it, not at it: the guard runs only from a frontier cursor, whose
/// holder has every entry at its xid, and the page reads strictly after it.
/// A waiter takes the page only with evidence that its user read the root in
/// a snapshot whose frontier is past its own cursor, which is at or past the
/// check's (``StreamChecks``); every change with a stamp below that frontier
/// was visible there, the changes at the cursor's xid among them. So what
/// changed at the cursor's xid is in the evidence, and what changed after it
/// is in the guard. Read at it, as it was before, the guard named the write
/// a cursor stops at, often the one just delivered (a set renamed, made
/// public), and every reader of the stream made a check of their own at the
/// next commit (`StreamFanOutTests.aCursorAtTheRootsOwnChangeStillShares`).
/// `ferry.access_changed_users` reads after it for the same reason.
extension ChangesPlan {
    /// Most grants and revocations the guard reads since the cursor; that
    /// many means too many to tell, and the page is shared with nobody.
    static let guardEntryLimit = 1_000

    /// The guard's statement, run after the prelude (which names the root
    /// row) as the caller; nil when the plan's pages are never shared: not a
    /// stream, a root read through a parent, or a cursor that is not a
    /// frontier (the start, or a position after a full page).
    /// Parameters: the cursor's xid (``ChangeCursor/bindXID(into:)``),
    /// then ``guardEntryLimit``.
    var streamGuard: PlannedStatement? {
        var binds = SQLBinds()
        let xid = request.since.bindXID(into: &binds)
        let limit = binds.bind(.int(Int64(Self.guardEntryLimit)))
        guard let columns = guardColumns(xid8: "\(xid)::xid8", limit: limit) else { return nil }
        return binds.statement(
            """
            SELECT ferry.feed_frontier()::text AS frontier,
                   \(columns.map { "\($0.sql) AS \($0.name)" }.joined(separator: ",\n       "))
            """)
    }

    /// A stream waiter's activity check (``activityStatement(waiting:)``)
    /// with the guard's columns beside its own when it found nothing: an
    /// empty page is the check's own snapshot, so the guard read there, at
    /// the check's frontier, proves what one read after it would. When it
    /// found something they are NULL, unread: only ``streamGuard`` after the
    /// page proves anything then (``FeedCheck/runStream``). Nil where
    /// ``streamGuard`` is. Parameters: the cursor, as the activity check's,
    /// then ``guardEntryLimit``.
    var guardedActivityStatement: PlannedStatement? {
        var (binds, cursor) = cursorBinds()
        let activity = activitySQL(waiting: true, cursor: cursor)
        let limit = binds.bind(.int(Int64(Self.guardEntryLimit)))
        guard let columns = guardColumns(xid8: cursor.xid8, limit: limit) else { return nil }
        // OFFSET 0 keeps the check a subquery, read once: `found` is a column, not its probes again.
        return binds.statement(
            """
            SELECT a.*,
                   \(columns.map { "CASE WHEN NOT a.found THEN \($0.sql) END AS \($0.name)" }.joined(separator: ",\n       "))
              FROM (\(activity)
             OFFSET 0) a
            """)
    }

    /// Whether ``streamGuard`` is not nil, told without writing its SQL: a
    /// stream's waiter asks this on every wake, and builds the guard only
    /// when it runs a check of its own (most take another's page).
    var sharesPages: Bool {
        guard let subscription, subscription.sharesAcrossUsers, request.since.position == nil, !request.since.isStart,
            let root = catalog[subscription.root], root.column("id") != nil
        else { return false }
        return true
    }

    /// The guard's columns but its frontier, read by ``StreamGuard``; `xid8`
    /// is the cursor's xid, `limit` the parameter of ``guardEntryLimit``.
    private func guardColumns(xid8: String, limit: SQLParameter) -> [(name: String, sql: String)]? {
        guard sharesPages, let subscription, let root = catalog[subscription.root], let idType = root.column("id")?.type
        else { return nil }
        let table = root.qualifiedName
        let key = TransactionSetting.streamKey.current()
        let row = "SELECT 1 FROM \(table) r WHERE r.id = (SELECT CAST(\(key) AS \(idType)))"
        let logs = ["ferry.public_grants", "ferry.public_revocations"].map { log in
            "EXISTS (SELECT 1 FROM \(log) p WHERE p.scope_table = \(SQL.literal(table))::regclass AND p.scope_id = \(key) AND p.xid > \(xid8))"
        }
        return [
            ("readable", "EXISTS (\(row))"),
            ("root_changed", "EXISTS (\(row) AND r._ferry_xid > \(xid8))"),
            ("public_changed", "(\(logs.joined(separator: " OR ")))"),
            ("users", "ferry.access_changed_users(\(xid8), \(limit))::text"),
        ]
    }
}

/// The answer of ``ChangesPlan/streamGuard``.
struct StreamGuard: Sendable {
    /// The frontier of the guard's snapshot: every transaction below it had ended.
    let frontier: UInt64
    /// The caller read the root row in that snapshot.
    let readable: Bool
    /// Nothing deciding who reads the root changed after the cursor's xid,
    /// and few enough users' access did to name them (core 0030 answers NULL
    /// for too many).
    let unchanged: Bool
    /// The users whose access changed after the cursor's xid.
    let users: Set<String>

    init(frontier: UInt64, readable: Bool, unchanged: Bool, users: Set<String>) {
        self.frontier = frontier
        self.readable = readable
        self.unchanged = unchanged
        self.users = users
    }

    init(_ result: PostgresResult) throws {
        let row = try ChangesPage.firstRow(result)
        guard let frontier = try row.uint64("frontier") else { throw ChangesPage.malformed }
        self.frontier = frontier
        readable = try row.bool("readable") == true
        let users = row["users"]
        self.users = Set(Self.uuids(users ?? ""))
        unchanged = try row.bool("root_changed") == false && row.bool("public_changed") == false && users != nil
    }

    /// The elements of a `uuid[]`'s text (`{a,b}`): uuids need no quoting.
    static func uuids(_ text: String) -> [String] {
        let inner = text.utf8.dropFirst().dropLast()
        guard text.hasPrefix("{"), text.hasSuffix("}"), !inner.isEmpty else { return [] }
        return inner.split(separator: UInt8(ascii: ",")).map { String(Substring($0)) }
    }
}
