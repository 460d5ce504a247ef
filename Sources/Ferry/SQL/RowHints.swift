import FerryPostgres

/// How Ferry makes the live hints of a row its one-row UPDATE wrote (issue 47
/// item 4), instead of the table's notify trigger, introspected per table
/// (``SchemaIntrospector``'s `row_hints`): the table's row mark function
/// (`ferry.sync_mark_<oid>`, functions/live.sql), the table's oid, and its
/// access scopes' tables and member columns in the order of their oids.
///
/// ``FastUpdateSQL`` calls the mark function in its `RETURNING` clause and
/// returns the row's stamp, writer and scope keys beside it (``returning(_:)``).
/// In Ferry's collect mode the function marks the statement, so that the notify
/// trigger's function returns at its first statement, and answers true; Ferry
/// then makes the hints the trigger would have made (``hints(in:)``), which
/// reach the outbox beside what the transaction collected. Why: making the
/// text in SQL (`ferry.sync_hints_<oid>`, its predecessor) was a dozen function
/// calls set up and run in every PATCH, ~80,000 of its ~1.67M instructions in
/// PostgreSQL (bench/feed/README.md); here it is two calls and three columns.
/// Only tables whose scope columns are plain (never NULL, a uuid or an integer)
/// and not updatable by the serve role have a mark function: the row's new keys
/// are then its only keys, and their text is what the trigger's `format` makes.
public struct RowHints: Sendable, Equatable, Codable {
    /// `ferry.sync_mark_<oid>`, as the introspection names it.
    public let mark: String
    public let table: UInt32
    public let scopes: [Scope]

    public struct Scope: Sendable, Equatable, Codable {
        public let table: UInt32
        public let column: String
    }

    /// The result columns: whether Ferry makes the row's hints, its stamp, its writer, its scope keys.
    static let markedColumn = "ferry_hinted"
    static let stampColumn = "ferry_hint_stamp"
    static let writerColumn = "ferry_hint_writer"
    static func scopeColumn(_ index: Int) -> String { "ferry_hint_scope_\(index)" }

    /// The `RETURNING` items for the written row, the UPDATE's target `alias`.
    func returning(_ alias: String) -> String {
        let column = SQL.column(alias)
        return
            ([
                "\(mark)(\(alias)) AS \(Self.markedColumn)", "\(column("_ferry_xid")) AS \(Self.stampColumn)",
                "\(column("_ferry_writer")) AS \(Self.writerColumn)",
            ] + scopes.enumerated().map { "\(column($0.element.column)) AS \(Self.scopeColumn($0.offset))" })
            .joined(separator: ", ")
    }

    /// The hints of the rows of `result` that the mark function marked, as the
    /// notify trigger makes them: the scope hints in the order of the scope
    /// tables' oids, then the writer's (`*` without one). Values, not lines: the
    /// outbox wakes this instance's waiters with them as they are.
    func hints(in result: PostgresResult) -> [ChangeHint] {
        // By position: ``returning(_:)``'s columns end the result, in its order (a lookup
        // by name hashes each name for each row, on every PATCH's path).
        let marked = result.columns.count - 3 - scopes.count
        guard marked >= 0, result.columns[marked] == Self.markedColumn else { return [] }
        var hints: [ChangeHint] = []
        hints.reserveCapacity(result.rows.count * (scopes.count + 1))
        for row in result.rows where row[marked] == "t" {
            // An xid8's text is a number; were it not, a wake for everyone is never one too few.
            guard let stamp = row[marked + 1] else { continue }
            guard let xid = UInt64(stamp) else {
                hints.append(.everyone)
                continue
            }
            for index in scopes.indices {
                // A plain scope column is never NULL; were one, the trigger leaves it out too.
                guard let key = row[marked + 3 + index] else { continue }
                hints.append(ChangeHint(xid: xid, table: table, target: .scope(table: scopes[index].table, id: key)))
            }
            hints.append(ChangeHint(xid: xid, table: table, target: row[marked + 2].map { .user($0) } ?? .everyone))
        }
        return hints
    }

    /// The hints Ferry makes for `statements`' results (the same order).
    static func made(by statements: [PlannedStatement], _ results: some Collection<PostgresResult>) -> [ChangeHint] {
        var hints: [ChangeHint] = []
        for (statement, result) in zip(statements, results) {
            if let rowHints = statement.rowHints { hints += rowHints.hints(in: result) }
        }
        return hints
    }
}
