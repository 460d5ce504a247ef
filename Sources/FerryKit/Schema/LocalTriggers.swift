/// The SQLite triggers that make every write to a synced table FerryKit's,
/// however the app makes it: `store.insert`, a GRDB record, or plain SQL
/// inside `store.database.write`. In the same statement, and so the same
/// transaction, a trigger checks the row against the server's schema and
/// records the operation in `ferry_outbox` (with its per-field dirty mask) and
/// the row's base in `ferry_base`. Pure SQL text, so it is tested without a
/// database (`LocalTriggersTests`) and with one (`GRDBWritesTests`).
///
/// The triggers ask the store through four SQL functions, registered on each
/// of its connections (``FerryStore/prepare(_:)``):
/// - `ferry_internal()`: FerryKit itself is writing (the engine applying the
///   server's rows, the outbox's own bookkeeping): no check, nothing recorded;
/// - `ferry_group()`: the id of the ``FerryStore/write(_:)`` group under way, or NULL;
/// - `ferry_op_id()`: a new operation id, which `ferry_outbox`'s guard then
///   takes as coming from a trigger;
/// - `ferry_issued(id)`: whether `id` came from `ferry_op_id()` (once).
///
/// A connection without them (a file opened by another program) cannot write
/// a synced table at all: "no such function" rather than a write never uploaded.
enum LocalTriggers {
    /// The names of every trigger FerryKit installs on a resource's table.
    static func names(_ resource: String) -> [String] {
        ["insert", "update", "delete"].map { "ferry_\($0)_\(resource)" }
    }

    /// Statements that (re)install the triggers of `resource`'s local table.
    static func statements(for resource: ServerSchema.Resource) -> [String] {
        guard resource.column("id") != nil else { return [] }
        let drops = names(resource.name).map { "DROP TRIGGER IF EXISTS \(LocalSchema.quote($0))" }
        return drops + [insert(resource), update(resource), delete(resource)]
    }

    /// The guards of `ferry_outbox`: only FerryKit and the synced tables'
    /// triggers write it.
    static let outboxGuards: [String] = {
        let message = literal(
            """
            ferry: ferry_outbox is FerryKit's record of what to upload, and only FerryKit writes it: \
            write the synced tables instead (store.insert, or GRDB inside store.database.write), and FerryKit records each write
            """)
        return [
            "CREATE TRIGGER ferry_outbox_guard_insert BEFORE INSERT ON ferry_outbox WHEN NOT ferry_internal() AND NOT ferry_issued(NEW.op_id) "
                + "BEGIN SELECT RAISE(ABORT, \(message)); END",
            "CREATE TRIGGER ferry_outbox_guard_update BEFORE UPDATE ON ferry_outbox WHEN NOT ferry_internal() "
                + "BEGIN SELECT RAISE(ABORT, \(message)); END",
            "CREATE TRIGGER ferry_outbox_guard_delete BEFORE DELETE ON ferry_outbox WHEN NOT ferry_internal() "
                + "BEGIN SELECT RAISE(ABORT, \(message)); END",
        ]
    }()

    // MARK: The three triggers

    static func insert(_ resource: ServerSchema.Resource) -> String {
        let name = resource.name
        var body = [raise("\(name).id must be set: FerryKit makes ids offline (FerryID(), or a lowercase UUID)", when: "NEW.\"id\" IS NULL")]
        if let id = resource.column("id"), let bad = mismatch(id, "NEW.\"id\"") {
            body.append(raise(typeMessage(name, id), when: bad))
        }
        for column in resource.columns where column.name != "id" {
            let value = "NEW.\(LocalSchema.quote(column.name))"
            if !column.writable || ServerSchema.Column.syncColumns.contains(column.name) {
                body.append(raise(readOnlyMessage(name, column), when: "\(value) IS NOT NULL"))
                continue
            }
            if WriteCheck.required(column) {
                body.append(
                    raise(
                        "\(name).\(column.name) is required: it cannot be null and the server has no default for it",
                        when: "\(value) IS NULL"))
            }
            if let bad = mismatch(column, value) { body.append(raise(typeMessage(name, column), when: bad)) }
        }
        let fields = dirtyMask(writable(resource)) { "NEW.\($0) IS NOT NULL" }
        body.append(
            """
            INSERT INTO ferry_outbox (op_id, resource, row_id, kind, fields, created_at, group_id) \
            VALUES (ferry_op_id(), \(literal(name)), NEW."id", 'create', \(fields), \(now), ferry_group())
            """)
        return trigger("insert", resource, "AFTER INSERT", body)
    }

    static func update(_ resource: ServerSchema.Resource) -> String {
        let name = resource.name
        let onServer = resource.column("revision") != nil ? "OLD.\"revision\" IS NOT NULL" : "0"
        var body: [String] = []
        for column in resource.columns {
            let (new, old) = ("NEW.\(LocalSchema.quote(column.name))", "OLD.\(LocalSchema.quote(column.name))")
            let changed = "\(new) IS NOT \(old)"
            if column.name == "id" {
                body.append(raise("\(name).id cannot change: delete the row and insert another", when: changed))
            } else if !column.writable || ServerSchema.Column.syncColumns.contains(column.name) {
                body.append(raise(readOnlyMessage(name, column), when: changed))
            } else {
                if column.updatable == false {
                    body.append(
                        raise(
                            "\(name).\(column.name) is read-only once the server has the row: it is set when the row is created",
                            when: "\(changed) AND \(onServer)"))
                }
                if !column.nullable {
                    body.append(raise("\(name).\(column.name) cannot be null on the server", when: "\(new) IS NULL AND \(old) IS NOT NULL"))
                }
                if let bad = mismatch(column, new) { body.append(raise(typeMessage(name, column), when: "\(changed) AND (\(bad))")) }
            }
        }
        let columns = writable(resource)
        let anyChanged = columns.isEmpty ? "0" : columns.map { "NEW.\($0) IS NOT OLD.\($0)" }.joined(separator: " OR ")
        body.append(captureBase(resource, when: "\(onServer) AND (\(anyChanged))"))
        body.append(
            """
            INSERT INTO ferry_outbox (op_id, resource, row_id, kind, fields, created_at, group_id) \
            SELECT ferry_op_id(), \(literal(name)), NEW."id", 'update', \(dirtyMask(columns) { "NEW.\($0) IS NOT OLD.\($0)" }), \(now), ferry_group() \
            WHERE \(anyChanged)
            """)
        return trigger("update", resource, "AFTER UPDATE", body)
    }

    static func delete(_ resource: ServerSchema.Resource) -> String {
        let onServer = resource.column("revision") != nil ? "OLD.\"revision\" IS NOT NULL" : "0"
        return trigger(
            "delete", resource, "AFTER DELETE",
            [
                captureBase(resource, when: onServer),
                """
                INSERT INTO ferry_outbox (op_id, resource, row_id, kind, fields, created_at, group_id) \
                VALUES (ferry_op_id(), \(literal(resource.name)), OLD."id", 'delete', '[]', \(now), ferry_group())
                """,
            ])
    }

    // MARK: Parts

    static func trigger(_ kind: String, _ resource: ServerSchema.Resource, _ timing: String, _ body: [String]) -> String {
        "CREATE TRIGGER \(LocalSchema.quote("ferry_\(kind)_\(resource.name)")) \(timing) ON \(LocalSchema.quote(resource.name)) "
            + "WHEN NOT ferry_internal() BEGIN\n" + body.map { "  \($0);\n" }.joined() + "END"
    }

    /// The quoted names of the columns the app writes and uploads.
    static func writable(_ resource: ServerSchema.Resource) -> [String] {
        resource.columns.filter { $0.writable && !ServerSchema.Column.syncColumns.contains($0.name) }.map { LocalSchema.quote($0.name) }
    }

    /// A JSON array of the names of `columns` for which `test` holds:
    /// the operation's per-field dirty mask.
    static func dirtyMask(_ columns: [String], _ test: (String) -> String) -> String {
        guard !columns.isEmpty else { return "'[]'" }
        let parts = columns.map { column in
            // The quoted identifier's name, as a JSON string inside an SQL literal.
            let name = String(column.dropFirst().dropLast()).replacingOccurrences(of: "\"\"", with: "\"")
            return "CASE WHEN \(test(column)) THEN \(literal(jsonString(name) + ",")) ELSE '' END"
        }
        return "'[' || rtrim(" + parts.joined(separator: " || ") + ", ',') || ']'"
    }

    /// Keeps the row's server version (OLD) as the base of the local edits,
    /// unless an earlier pending edit already did: the merge's base.
    static func captureBase(_ resource: ServerSchema.Resource, when condition: String) -> String {
        // json_object takes at most 127 arguments: long rows are patched together in pieces.
        let pieces = stride(from: 0, to: resource.columns.count, by: 60).map { start in
            "json_object("
                + resource.columns[start..<min(start + 60, resource.columns.count)].map { column in
                    literal(column.name) + ", " + jsonOf(column, "OLD.\(LocalSchema.quote(column.name))")
                }.joined(separator: ", ") + ")"
        }
        let row = pieces.dropFirst().reduce(pieces.first ?? "json_object()") { "json_patch(\($0), \($1))" }
        let revision = resource.column("revision") != nil ? "OLD.\"revision\"" : "0"
        return "INSERT OR IGNORE INTO ferry_base (resource, id, revision, row) SELECT \(literal(resource.name)), OLD.\"id\", \(revision), \(row) "
            + "WHERE \(condition)"
    }

    /// A stored value as the JSON the server sends: booleans as true and
    /// false, JSON and array columns as their JSON.
    static func jsonOf(_ column: ServerSchema.Column, _ value: String) -> String {
        switch ColumnType(column.valueType) {
        case .boolean: "CASE \(value) WHEN 1 THEN json('true') WHEN 0 THEN json('false') ELSE \(value) END"
        case .any, .array: "CASE WHEN json_valid(\(value)) THEN json(\(value)) ELSE \(value) END"
        default: value
        }
    }

    /// SQL that is true when `value` (a non-null stored value) does not fit
    /// `column`'s type, as ``ColumnType/accepts(_:)`` decides for JSON; nil
    /// when anything fits.
    static func mismatch(_ column: ServerSchema.Column, _ value: String) -> String? {
        let type = "typeof(\(value))"
        switch ColumnType(column.valueType) {
        case .text: return "\(type) NOT IN ('text', 'null')"
        case .uuid:
            let hex = "[0-9a-fA-F]"
            let dashed = [8, 4, 4, 4, 12].map { String(repeating: hex, count: $0) }.joined(separator: "-")
            return "\(type) NOT IN ('text', 'null') OR (\(type) = 'text' AND NOT (\(value) GLOB '\(dashed)' "
                + "OR \(value) GLOB '\(String(repeating: hex, count: 32))'))"
        case .integer(let min, let max):
            return "\(type) NOT IN ('integer', 'null') OR (\(type) = 'integer' AND \(value) NOT BETWEEN \(min) AND \(max))"
        case .number: return "\(type) NOT IN ('integer', 'real', 'null')"
        case .boolean: return "\(type) NOT IN ('integer', 'null') OR \(value) NOT IN (0, 1)"
        case .array: return "\(type) NOT IN ('text', 'null') OR (\(type) = 'text' AND (NOT json_valid(\(value)) OR json_type(\(value)) <> 'array'))"
        case .any: return "\(type) = 'blob' OR (\(type) = 'text' AND NOT json_valid(\(value)))"
        case .scalar: return "\(type) = 'blob'"
        }
    }

    static func raise(_ message: String, when condition: String) -> String {
        "SELECT RAISE(ABORT, \(literal("ferry: " + message))) WHERE \(condition)"
    }

    static func typeMessage(_ resource: String, _ column: ServerSchema.Column) -> String {
        "\(resource).\(column.name) is \(column.type) on the server; the value written does not fit it"
    }

    static func readOnlyMessage(_ resource: String, _ column: ServerSchema.Column) -> String {
        "\(resource).\(column.name) is read-only: the server sets it"
    }

    /// Seconds since 1970, as `created_at` holds them.
    static let now = "((julianday('now') - 2440587.5) * 86400.0)"

    /// An SQL string literal.
    static func literal(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }

    /// A JSON string.
    static func jsonString(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
