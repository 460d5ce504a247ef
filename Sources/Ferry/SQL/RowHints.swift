import FerryPostgres

/// How Ferry makes the live hints of a row its one-row UPDATE wrote (issue 47
/// item 4), instead of the table's triggers, introspected per table
/// (``SchemaIntrospector``'s `row_hints`): the table's row mark function
/// (`ferry.sync_mark_<oid>`, functions/live.sql, which marks that the table
/// takes Ferry's hints), the table's oid, and its access scopes' tables and
/// member columns in the order of their oids.
///
/// ``FastUpdateSQL`` sets ``TransactionSetting/made`` to the table's oid and the
/// row's id in its SET list (``madeHere(_:)``), which PostgreSQL evaluates for the
/// row it is about to write, just before the row's triggers: the row's update
/// trigger then leaves the row's hints to Ferry (such a table has no UPDATE
/// statement trigger; `ferry.sync_row_hints_source`). The statement returns the
/// row's stamp, writer and scope keys (``returning(_:)``), and Ferry makes the
/// hints the trigger would have made (``hints(in:)``), which reach the outbox
/// beside what the transaction collected. Why: a statement trigger cost every
/// PATCH ~45,000 instructions even when its function returned at once, and
/// making the text in SQL cost ~80,000 (bench/feed/README.md); here it is one
/// `set_config` and three columns. Only tables whose scope columns are plain
/// (never NULL, a uuid or an integer) and not updatable by the serve role have
/// a mark function: the row's new keys are then its only keys, and their text
/// is what the trigger makes.
public struct RowHints: Sendable, Equatable, Codable {
    /// `ferry.sync_mark_<oid>`, as the introspection names it: the table takes Ferry's hints.
    /// Ferry no longer calls it (a Ferry of the previous release does, in its `RETURNING`).
    public let mark: String
    public let table: UInt32
    public let scopes: [Scope]

    public struct Scope: Sendable, Equatable, Codable {
        public let table: UInt32
        public let column: String
    }

    /// The result columns: the row's stamp, its writer, its scope keys.
    static let stampColumn = "ferry_hint_stamp"
    static let writerColumn = "ferry_hint_writer"
    static func scopeColumn(_ index: Int) -> String { "ferry_hint_scope_\(index)" }

    /// The condition the UPDATE's SET list evaluates for the row it writes, the
    /// UPDATE's target `alias`: it marks the row (the table's oid and the row's id)
    /// as one whose hints Ferry makes. Always true.
    func madeHere(_ alias: String) -> String {
        "\(TransactionSetting.made.set("'\(table) ' || \(SQL.column(alias)("id"))::text")) IS NOT NULL"
    }

    /// Clears the mark of a statement that wrote no row, before the next statement
    /// of its transaction (``CallerTransaction``): a row that met the statement's
    /// conditions but was not written (another transaction changed it first, so that
    /// it no longer met them; a BEFORE trigger of the app's skipped it) leaves it set,
    /// and the next statement, writing that row, would leave its hints to Ferry, which
    /// made none.
    static let unmark = PlannedStatement("SELECT \(TransactionSetting.made.set("''")) IS NULL AS unmarked")

    /// The `RETURNING` items for the written row, the UPDATE's target `alias`.
    func returning(_ alias: String) -> String {
        let column = SQL.column(alias)
        return
            ([
                "\(column("_ferry_xid")) AS \(Self.stampColumn)", "\(column("_ferry_writer")) AS \(Self.writerColumn)",
            ] + scopes.enumerated().map { "\(column($0.element.column)) AS \(Self.scopeColumn($0.offset))" })
            .joined(separator: ", ")
    }

    /// The hints of the rows of `result`, as the update trigger makes them: the
    /// scope hints in the order of the scope tables' oids, then the writer's (`*`
    /// without one). Values, not lines: the outbox wakes this instance's waiters
    /// with them as they are.
    func hints(in result: PostgresResult) -> [ChangeHint] {
        // By position: ``returning(_:)``'s columns end the result, in its order (a lookup
        // by name hashes each name for each row, on every PATCH's path).
        let stamped = result.columns.count - 2 - scopes.count
        guard stamped >= 0, result.columns[stamped] == Self.stampColumn else { return [] }
        var hints: [ChangeHint] = []
        hints.reserveCapacity(result.rows.count * (scopes.count + 1))
        for row in result.rows {
            // An xid8's text is a number; were it not, a wake for everyone is never one too few.
            guard let stamp = row[stamped] else { continue }
            guard let xid = UInt64(stamp) else {
                hints.append(.everyone)
                continue
            }
            for index in scopes.indices {
                // A plain scope column is never NULL; were one, the trigger leaves it out too.
                guard let key = row[stamped + 2 + index] else { continue }
                hints.append(ChangeHint(xid: xid, table: table, target: .scope(table: scopes[index].table, id: key)))
            }
            hints.append(ChangeHint(xid: xid, table: table, target: row[stamped + 1].map { .user($0) } ?? .everyone))
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
