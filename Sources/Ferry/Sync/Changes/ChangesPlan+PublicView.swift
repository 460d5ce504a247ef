import FerryPostgres

/// A public stream's page, read as no user at all, so that it is the same for
/// every reader and a shared HTTP cache may answer it to all of them
/// (docs/changes-feed.md, "Pages a shared cache may keep").
///
/// A subscription's page as the caller reads the caller's own grants and
/// revocations of its root row, and through Row Level Security the rows only
/// the caller reads (the root's member rows, when they are a member). None of
/// that is in the page of a transaction whose `ferry.user_id` and
/// `ferry.claims` are empty: its access logs are the public ones alone (a user
/// id of NULL matches no grant), and its rows are those every signed-in user
/// reads. A member loses nothing by it: every row they read through the owner
/// and membership rules is in their default stream.
///
/// The transaction first tests, as no user, whether the root row is readable
/// (public now) and, from a cursor, whether it stopped being public after the
/// cursor; when it is not public, or did stop, the caller's identity is set
/// back and the page is the caller's (private). A page read as no user that
/// still holds a revoked entry (the root stopped being public between that
/// test and the page) is not answered: the caller's own page is, so that a
/// member is never told to drop a row they may still read.
extension ChangesPlan {
    /// The same subscription plan, read as no user when its root is public;
    /// unchanged in a schema where no row can be public (no
    /// `ferry.sync_public`), whose hand-written policies may not expect a
    /// transaction with no user.
    func viewedPublicly() -> ChangesPlan {
        var plan = self
        plan.publicView = subscription != nil && catalog.hasPublicRows
        return plan
    }

    /// Public reads on and the stream's key, as ``prelude``; the caller's
    /// identity kept aside and cleared; then the test that sets it back
    /// unless the root row is public (its one boolean: whether the page is
    /// read as no user).
    var publicPrelude: [PlannedStatement] {
        guard let subscription, let root = catalog[subscription.root] else { return [] }
        let key = TransactionSetting.streamKey.current()
        let idType = root.column("id")?.type ?? "text"
        // Two statements bind: the first the stream's row, the test the cursor's xid.
        var keyBinds = SQLBinds(), testBinds = SQLBinds()
        let id = keyBinds.bind(.text(subscription.id))
        var test = "EXISTS (SELECT 1 FROM \(root.qualifiedName) r WHERE r.id = CAST(\(key) AS \(idType)))"
        if !request.since.isStart {
            let xid = request.since.bindXID(into: &testBinds)
            let base = testBinds.bind(.text(String(request.since.base)))
            // A stop after the cursor would put revoked entries in the page. At the cursor's xid
            // too, unlike the stream guard's reads: a plain poll may come from a position (a full
            // page's end), whose page still holds that xid's later entries. Not one below a
            // download's base, which the page does not serve (ChangesPlan+Streams.swift): such a
            // download's pages stay everyone's.
            test += """
                 AND NOT EXISTS (SELECT 1 FROM ferry.public_revocations p
                  WHERE p.scope_table = \(SQL.literal(root.qualifiedName))::regclass AND p.scope_id = \(key)
                    AND p.xid >= \(xid)::xid8 AND p.xid >= \(base)::xid8)
                """
        }
        return [
            keyBinds.statement(
                "SELECT " + TransactionSetting.publicReads.set("'on'") + ", " + TransactionSetting.streamKey.set("\(id)") + ", "
                    + TransactionSetting.streamCaller.set("coalesce(\(TransactionSetting.userID.current(missingOK: true)), '')") + ", "
                    + TransactionSetting.streamClaims.set("coalesce(\(TransactionSetting.claims.current(missingOK: true)), '')")),
            PlannedStatement("SELECT " + TransactionSetting.userID.set("''") + ", " + TransactionSetting.claims.set("''")),
            // CASE evaluates only the branch taken: the identity is set back only when the root is not public.
            testBinds.statement(
                """
                SELECT CASE WHEN v.public THEN true
                       ELSE (\(TransactionSetting.userID.set(TransactionSetting.streamCaller.current()))
                             || \(TransactionSetting.claims.set(TransactionSetting.streamClaims.current()))) IS NULL END AS public
                  FROM (SELECT \(test) AS public) v
                """),
        ]
    }

    /// Whether a round trip (``FeedProbe/Look``: `prelude` results first)
    /// was read as no user (always false without the public view).
    func readPublicly(_ results: [PostgresResult], prelude: Int) throws -> Bool {
        guard publicView, prelude > 1 else { return false }
        return try results[prelude - 1].first?.bool("public") == true
    }

    /// What a poll read as no user gave.
    enum ViewedPage {
        /// Read as no user, no revoked entry: the same for every reader.
        case everyones(ChangesPage)
        /// Read as the caller (the root is not public): theirs alone.
        case callers(ChangesPage)
        /// Read as no user, with a revoked entry: to be read again as the caller.
        case revoking
    }

    /// A poll's page (``FeedProbe/poll(_:)``: the activity check, then the
    /// page when it found something), as ``ViewedPage`` says, by the
    /// transaction that made it.
    func viewedPoll(as caller: Caller, on database: PostgresGateway) throws -> ViewedPage {
        let look = try FeedProbe.poll(self).run(as: caller, on: database)
        guard let read = look.read else {
            return try readPublicly(look.checked, prelude: look.prelude) ? .everyones(look.page) : .callers(look.page)
        }
        guard try readPublicly(read, prelude: look.prelude) else { return .callers(look.page) }
        // A false positive (a row whose own text holds it) only makes the page private.
        return Self.holdsRevoked(look.page.changes ?? "") ? .revoking : .everyones(look.page)
    }

    /// Whether `changes` (the page's JSON as PostgreSQL wrote it) has a
    /// member `"revoked"` whose value is `true`, however it is spaced.
    static func holdsRevoked(_ changes: String) -> Bool {
        let bytes = Array(changes.utf8), name = Array("\"revoked\"".utf8), value = Array("true".utf8)
        var index = 0
        while index + name.count <= bytes.count {
            defer { index += 1 }
            guard bytes[index..<index + name.count].elementsEqual(name) else { continue }
            var at = index + name.count
            while at < bytes.count, bytes[at] == 0x20 { at += 1 }
            guard at < bytes.count, bytes[at] == UInt8(ascii: ":") else { continue }
            at += 1
            while at < bytes.count, bytes[at] == 0x20 { at += 1 }
            if at + value.count <= bytes.count, bytes[at..<at + value.count].elementsEqual(value) { return true }
        }
        return false
    }
}
