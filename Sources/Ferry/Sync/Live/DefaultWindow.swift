import Foundation
import FerryPostgres

/// The rows changed in a default-stream page's window, with the columns that
/// say who may read each (``ChangesPlan/windowTables``), read in the page's
/// snapshot: from them, and the scope rows a user read in an earlier
/// snapshot, ``DefaultChecks`` tells which of these rows that user's own page
/// would hold, or that it cannot tell.
struct DefaultWindow: Sendable {
    /// A changed row: its id, and the values of ``ChangesPlan/WindowTable/columns`` in their order (nil: NULL).
    struct Row: Sendable {
        let id: String
        let values: [String?]
    }

    struct Table: Sendable {
        let table: ChangesPlan.WindowTable
        let rows: [Row]
        /// Whether the page follows the table (else it is read for its scope rows only).
        let followed: Bool
    }

    let tables: [Table]
    /// The users with an access grant or revocation since the cursor.
    let users: Set<String>
    /// The frontier of the page's snapshot: every transaction below it had ended.
    let frontier: UInt64
    /// When its check had its answer, after its snapshot: the bearer of a
    /// waiter that takes the page must have been checked within the token
    /// cache's lifetime before it (``TokenVouchers``).
    let endedAt: ContinuousClock.Instant
    /// Per scope table, its rows written since the cursor (below the
    /// frontier or above it, all visible in the page's snapshot), by id.
    private let changedScopes: [String: [String: Row]]
    private let tableIndex: [String: Int]

    enum Reading { case yes, no, unknown }

    /// From the page statement's row (``ChangesPlan/statement(withXIDs:window:)``); nil
    /// when any table had too many rows, or the access logs too many entries.
    init?(_ row: PostgresRow, tables: [ChangesPlan.WindowTable], followed: [String], frontier: UInt64) throws {
        guard let usersText = try row.string("window_users") else { return nil }
        let users = Set(StreamGuard.uuids(usersText))
        func rows(_ column: String, _ table: ChangesPlan.WindowTable) throws -> [Row]? {
            guard let text = try row.string(column),
                let array = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[Any]]
            else { return nil }
            var rows: [Row] = []
            for values in array {
                // Each entry is `[id, column values...]`, as ferry.window_keys spells it.
                guard values.count == table.columns.count + 1, let id = values.first as? String else { return nil }
                rows.append(Row(id: id, values: values.dropFirst().map { $0 as? String }))
            }
            return rows
        }
        var read: [Table] = []
        var changed: [String: [Row]] = [:]
        for (index, table) in tables.enumerated() {
            guard let entries = try rows("window_\(index)", table) else { return nil }
            read.append(Table(table: table, rows: entries, followed: followed.contains(table.name)))
            if table.isScope {
                guard let all = try rows("window_\(index)_all", table) else { return nil }
                changed[table.name] = all
            }
        }
        self.init(tables: read, users: users, frontier: frontier, changedScopes: changed)
    }

    /// A window as read (``init(_:tables:followed:frontier:)``), or as a test states it:
    /// `changedScopes`, per scope table, its rows written since the cursor.
    init(
        tables: [Table], users: Set<String>, frontier: UInt64, changedScopes: [String: [Row]], endedAt: ContinuousClock.Instant = .now
    ) {
        self.tables = tables
        self.users = users
        self.frontier = frontier
        self.endedAt = endedAt
        self.changedScopes = changedScopes.mapValues { rows in
            Dictionary(rows.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        }
        tableIndex = Dictionary(uniqueKeysWithValues: tables.enumerated().map { ($1.table.name, $0) })
    }

    /// The rows of the followed tables `user`'s own page would hold from this
    /// window, as indexes in the window's order; nil when it cannot be told:
    /// their access changed since the cursor, or a row's readers are not
    /// decided by the rows `scopes` holds (the scope rows the user read in a
    /// snapshot whose frontier is past the cursor, ``DefaultChecks``);
    /// `owned`: those of them the user read as their owner then (by a `.caller`
    /// path; the others they read as a member).
    /// `scopesHold`: whether `scopes` is still what the user reads in this
    /// window's snapshot (no scope row changed that they gained or lost).
    func readable(
        by user: String, scopes: Set<WaiterRegistry.ScopeKey>, owned: Set<WaiterRegistry.ScopeKey> = []
    ) -> (rows: [Int], scopesHold: Bool)? {
        let evidence = Evidence(scopes: scopes, owned: owned)
        guard !users.contains(user) else { return nil }
        var rows: [Int] = []
        var offset = 0
        var scopesHold = true
        for table in tables where table.table.isScope {
            for row in changedScopes[table.table.name]?.values.map({ $0 }) ?? [] {
                let reading = scopeRow(table, row, user: user, evidence: evidence)
                if reading == .unknown { return nil }
                if (reading == .yes) != scopes.contains(.init(scope: table.table.name, id: row.id)) { scopesHold = false }
            }
        }
        for table in tables {
            for (index, row) in table.rows.enumerated() {
                let reading =
                    table.table.isScope
                    ? scope(table.table.name, row.id, user: user, evidence: evidence) : self.row(table, row, user: user, evidence: evidence)
                switch reading {
                case .unknown: return nil
                case .yes where table.followed: rows.append(offset + index)
                default: break
                }
            }
            offset += table.rows.count
        }
        return (rows, scopesHold)
    }

    /// The scope rows a user read in the earlier snapshot, and those of them they read as their owner.
    private struct Evidence {
        let scopes: Set<WaiterRegistry.ScopeKey>
        let owned: Set<WaiterRegistry.ScopeKey>
    }

    /// A changed row of a scope table: read by its owner (a `.caller` path);
    /// else by its members, who are those of the earlier snapshot (no access
    /// of theirs changed since, or ``readable(by:scopes:owned:)`` gave up): a
    /// user who did not read it then does not now, and one who read it then
    /// not as its owner read it as a member, and still does, whatever this
    /// write changed of the row (a member's access is the members table's
    /// alone). One who read it as its owner, whom this write may have
    /// changed: cannot tell.
    private func scopeRow(_ table: Table, _ row: Row, user: String, evidence: Evidence) -> Reading {
        for path in table.table.paths {
            switch path.keys {
            case .caller:
                if value(table, row, path.column) == user { return .yes }
            case .scopeIDs:
                continue
            default:
                return .unknown
            }
        }
        let key = WaiterRegistry.ScopeKey(scope: table.table.name, id: row.id)
        guard evidence.scopes.contains(key) else { return .no }
        return evidence.owned.contains(key) ? .unknown : .yes
    }

    /// A changed row of another table: read when any of its paths reads it.
    private func row(_ table: Table, _ row: Row, user: String, evidence: Evidence) -> Reading {
        var reading = Reading.no
        for path in table.table.paths {
            let key = value(table, row, path.column)
            let one: Reading
            switch path.keys {
            case .caller:
                one = key == user ? .yes : .no
            case .readable(let parent):
                guard let key else {
                    one = .no
                    break
                }
                one = scope(parent, key, user: user, evidence: evidence)
            default:
                one = .unknown
            }
            if one == .yes { return .yes }
            if one == .unknown { reading = .unknown }
        }
        return reading
    }

    /// Whether `user` reads scope row `id` of `table` in this snapshot: as
    /// ``scopeRow`` when it changed in the window, else as in the earlier
    /// snapshot; unknown for a table that is not a scope table.
    private func scope(_ table: String, _ id: String, user: String, evidence: Evidence) -> Reading {
        guard let index = tableIndex[table], tables[index].table.isScope else { return .unknown }
        if let row = changedScopes[table]?[id] { return scopeRow(tables[index], row, user: user, evidence: evidence) }
        return evidence.scopes.contains(.init(scope: table, id: id)) ? .yes : .no
    }

    private func value(_ table: Table, _ row: Row, _ column: String) -> String? {
        if column == "id" { return row.id }
        guard let index = table.table.columns.firstIndex(of: column) else { return nil }
        return row.values[index]
    }
}
