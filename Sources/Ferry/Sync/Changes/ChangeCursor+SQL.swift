import FerryPostgres

/// The cursor as the feed's statements take it and give it back: bound in
/// one place, in one order, so that the page statement, the activity check
/// and a stream waiter's guarded check number it alike; and read back from a
/// full page's last entry in one place.
struct BoundCursor: Sendable {
    /// The cursor's xid, as text: an xid8 is unsigned 64-bit, which `.int` is not.
    let xid: SQLParameter
    /// Whether it is the full-sync cursor.
    let isStart: SQLParameter
    /// Whether it is a position (after a full page) rather than a frontier.
    let isPosition: SQLParameter
    /// The position's id as text; NULL at a frontier.
    let id: SQLParameter
    /// The position's base as text (``ChangeCursor/base``; 0 for none).
    let base: SQLParameter

    /// `xid` as an `xid8`.
    var xid8: String { "\(xid)::xid8" }

    /// Whether the cursor is older than the purge horizon `horizon` (an
    /// `xid8` expression): the client must start over (410). Names every
    /// parameter but ``id``, which the statement names itself. A purge can
    /// have removed an entry the holder needs only if it passed both the
    /// cursor and its base (docs/changes-feed.md, "Retention").
    func expired(horizon: String) -> String {
        """
        NOT \(isStart)::boolean AND \(base)::xid8 <= \(horizon) \
        AND (\(xid8) < \(horizon) OR (\(xid8) = \(horizon) AND \(isPosition)::boolean))
        """
    }

    /// Whether the cursor is ahead of this database: past the next transaction
    /// id of the statement's snapshot. No cursor this database gave out can be:
    /// each was at most the snapshot xmax of its day (a stamp, a frontier, a
    /// download's base), and xmax only grows. One that is came from before a
    /// restore to an older point (the devices' cursors outlive the data they
    /// were given for) or from another database: the client must start over
    /// (410), or it would wait, given nothing, until new commits pass it.
    var ahead: String {
        "greatest(\(xid8), \(base)::xid8) > pg_snapshot_xmax(pg_current_snapshot())"
    }
}

extension ChangeCursor {
    /// Binds the cursor as the next five parameters.
    func bind(into binds: inout SQLBinds) -> BoundCursor {
        BoundCursor(
            xid: binds.bind(.text(String(afterXID))), isStart: binds.bind(.bool(isStart)), isPosition: binds.bind(.bool(position != nil)),
            id: binds.bind(position.map { .text($0.id) } ?? .null), base: binds.bind(.text(String(base))))
    }

    /// Binds the cursor's xid alone, as the next parameter: for a statement
    /// that asks nothing of a position (``ChangesPlan/streamGuard``, which
    /// runs only at a frontier, and the public view's test).
    func bindXID(into binds: inout SQLBinds) -> SQLParameter {
        binds.bind(.text(String(afterXID)))
    }

    /// The names of a page's columns that hold its last entry (``read(_:)``).
    static let entryColumns = (xid: "next_xid", resource: "next_resource", id: "next_id")

    /// The position cursor of the entry a row names in ``entryColumns``; nil
    /// when any of them is NULL.
    static func read(_ row: PostgresRow) throws -> ChangeCursor? {
        guard let xid = try row.uint64(entryColumns.xid), let resource = try row.string(entryColumns.resource),
            let id = try row.string(entryColumns.id)
        else { return nil }
        return ChangeCursor(afterXID: xid, position: (resource, id))
    }
}
