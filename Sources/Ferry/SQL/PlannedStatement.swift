import FerryPostgres

/// A statement with typed binds: what a plan, a route or a write hook hands
/// to `PostgresGateway` to run.
struct PlannedStatement: Sendable, Equatable {
    let sql: String
    let binds: [Bind]
    /// How Ferry makes the live hints of the rows it writes (``RowHints``), when its
    /// `RETURNING` clause returns what they are made of (``FastUpdateSQL``).
    var rowHints: RowHints? = nil

    init(sql: String, binds: [Bind] = []) {
        self.sql = sql
        self.binds = binds
    }

    init(_ sql: String, _ binds: [Bind] = []) {
        self.init(sql: sql, binds: binds)
    }

    /// The statement as libpq takes it: every bind in PostgreSQL's text format.
    var postgres: PostgresStatement { PostgresStatement(sql, binds.map(\.text)) }
}

extension PostgresConnection {
    /// Runs `query` alone, outside a request's pipeline (the change listener,
    /// the purge): named apart from `query(_:_:)`, whose text binds by position.
    func run(_ query: SQLQuery) throws(PostgresError) -> PostgresResult {
        let statement = query.statement.postgres
        return try self.query(statement.sql, statement.params)
    }

    /// Runs `statement` alone (one assembled through ``SQLBinds``).
    func run(_ statement: PlannedStatement) throws(PostgresError) -> PostgresResult {
        let statement = statement.postgres
        return try self.query(statement.sql, statement.params)
    }
}

/// One statement parameter, sent in PostgreSQL's text format and cast in the
/// SQL (`$1::uuid`), so the same plan serves every value of its type.
enum Bind: Sendable, Equatable {
    case text(String)
    case int(Int64)
    case bool(Bool)
    /// A JSON document (the items of a write).
    case json(String)
    /// A `text[]` literal's elements (NULL elements allowed).
    case texts([String?])
    /// Revisions as a `bigint[]`, or NULL for no array at all.
    case revisions([Revision]?)
    case null

    /// The text PostgreSQL parses the parameter from; nil for NULL.
    var text: String? {
        switch self {
        case .text(let text), .json(let text): text
        case .int(let value): String(value)
        case .bool(let value): value ? "true" : "false"
        case .texts(let items): Self.arrayLiteral(items)
        case .revisions(let values): values.map { Self.arrayLiteral($0.map(\.description)) }
        case .null: nil
        }
    }

    /// A PostgreSQL array literal of text elements, quoted; nil elements are NULL.
    ///
    /// Byte by byte: it runs per request (Index filters, If-Match and If-None-Match
    /// revisions), and Foundation's `replacingOccurrences` was far slower, even for a
    /// one-element list.
    static func arrayLiteral(_ items: [String?]) -> String {
        let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
        var out: [UInt8] = [UInt8(ascii: "{")]
        out.reserveCapacity(items.reduce(2) { $0 + ($1?.utf8.count ?? 4) + 3 })
        for (index, item) in items.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            guard let item else {
                out.append(contentsOf: "NULL".utf8)
                continue
            }
            out.append(quote)
            for byte in item.utf8 {
                if byte == quote || byte == backslash { out.append(backslash) }
                out.append(byte)
            }
            out.append(quote)
        }
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }
}
