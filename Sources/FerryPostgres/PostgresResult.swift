// What a statement returns: `PostgresResult` (columns, rows, affected rows,
// command tag, built from a `PGresult`), `PostgresRow` with the column index
// its rows share, and the typed accessors that tell SQL NULL from a value that
// does not parse.

import CLibPQ

/// The outcome of one statement: its rows (text format) and command status.
public struct PostgresResult: Sendable {
    /// Column names, in order.
    public var columns: [String]
    /// The returned rows; empty for commands that return none.
    public var rows: [PostgresRow]
    /// Rows affected (`PQcmdTuples`): inserted, updated, deleted, selected; 0 when not applicable.
    public var affectedRows: Int
    /// The command tag, e.g. "INSERT 0 1", "UPDATE 3", "SELECT 2", "BEGIN".
    public var commandTag: String

    /// Creates a result by hand (mostly useful in tests of higher layers).
    public init(columns: [String], rows: [PostgresRow], affectedRows: Int, commandTag: String) {
        self.columns = columns
        self.rows = rows
        self.affectedRows = affectedRows
        self.commandTag = commandTag
    }

    public var first: PostgresRow? { rows.first }
}

/// One row of a result, as PostgreSQL text-format values.
///
/// The subscripts never trap: an unknown column or an out-of-range index reads as nil, like
/// NULL. Use the typed accessors (`int`, `string`…) to tell a missing column from a NULL.
public struct PostgresRow: Sendable {
    let index: PostgresColumnIndex
    let values: [String?]

    /// Creates a row by hand (mostly useful in tests of higher layers).
    public init(columns: [String], values: [String?]) {
        self.init(index: PostgresColumnIndex(columns), values: values)
    }

    init(index: PostgresColumnIndex, values: [String?]) {
        self.index = index
        self.values = values
    }

    public var columns: [String] { index.names }
    /// The number of columns.
    public var count: Int { values.count }

    /// The text value at `index`; nil for NULL or an out-of-range index.
    public subscript(_ position: Int) -> String? {
        values.indices.contains(position) ? values[position] : nil
    }

    /// The text value of the first column called `name`; nil for NULL or an unknown name.
    public subscript(_ name: String) -> String? {
        index.position(of: name).flatMap { self[$0] }
    }
}

extension PostgresResult {
    /// Copies a successful `PGresult` into Swift values. The caller still owns and clears it.
    init(copying result: OpaquePointer) {
        let fieldCount = Int(PQnfields(result))
        let rowCount = Int(PQntuples(result))
        let names = (0..<fieldCount).map { String(cString: PQfname(result, Int32($0))) }
        let index = PostgresColumnIndex(names)
        var rows: [PostgresRow] = []
        rows.reserveCapacity(rowCount)
        for row in 0..<Int32(rowCount) {
            var values: [String?] = []
            values.reserveCapacity(fieldCount)
            for field in 0..<Int32(fieldCount) {
                if PQgetisnull(result, row, field) != 0 {
                    values.append(nil)
                } else {
                    let length = Int(PQgetlength(result, row, field))
                    let bytes = UnsafeRawPointer(PQgetvalue(result, row, field)!)
                        .assumingMemoryBound(to: UInt8.self)
                    values.append(String(decoding: UnsafeBufferPointer(start: bytes, count: length), as: UTF8.self))
                }
            }
            rows.append(PostgresRow(index: index, values: values))
        }
        self.init(
            columns: names, rows: rows,
            affectedRows: Int(String(cString: PQcmdTuples(result))) ?? 0,
            commandTag: String(cString: PQcmdStatus(result))
        )
    }
}

/// Typed accessors. Each returns nil for SQL NULL and throws `PostgresError` of kind
/// `.decoding` when the column does not exist or its text does not parse as the type, so a
/// NULL is never confused with a mistake.
extension PostgresRow {
    private func text(_ position: Int) throws(PostgresError) -> String? {
        guard values.indices.contains(position) else {
            throw PostgresError(kind: .decoding, message: "no column at index \(position) (row has \(values.count))")
        }
        return values[position]
    }

    private func text(_ name: String) throws(PostgresError) -> String? {
        guard let position = index.position(of: name) else {
            throw PostgresError(kind: .decoding, message: "no column named \"\(name)\"")
        }
        return values[position]
    }

    private func parse<T>(_ raw: String?, _ column: String, _ type: String, _ convert: (String) -> T?) throws(PostgresError) -> T? {
        guard let raw else { return nil }
        guard let value = convert(raw) else {
            throw PostgresError(kind: .decoding, message: "column \(column): \"\(raw.prefix(64))\" is not a valid \(type)")
        }
        return value
    }

    /// The value as text; nil for NULL.
    public func string(_ position: Int) throws(PostgresError) -> String? { try text(position) }
    /// The value as text; nil for NULL.
    public func string(_ name: String) throws(PostgresError) -> String? { try text(name) }

    /// The value as `Int` (int2/int4/int8 text); nil for NULL.
    public func int(_ position: Int) throws(PostgresError) -> Int? {
        try parse(text(position), "\(position)", "integer") { Int($0) }
    }
    /// The value as `Int` (int2/int4/int8 text); nil for NULL.
    public func int(_ name: String) throws(PostgresError) -> Int? {
        try parse(text(name), name, "integer") { Int($0) }
    }

    /// The value as `Int64`; nil for NULL.
    public func int64(_ position: Int) throws(PostgresError) -> Int64? {
        try parse(text(position), "\(position)", "int64") { Int64($0) }
    }
    /// The value as `UInt64` (an `xid8`, say); nil for NULL.
    public func uint64(_ position: Int) throws(PostgresError) -> UInt64? {
        try parse(text(position), "\(position)", "uint64") { UInt64($0) }
    }
    /// The value as `UInt64` (an `xid8`, say); nil for NULL.
    public func uint64(_ name: String) throws(PostgresError) -> UInt64? {
        try parse(text(name), name, "uint64") { UInt64($0) }
    }
    /// The value as `Int64`; nil for NULL.
    public func int64(_ name: String) throws(PostgresError) -> Int64? {
        try parse(text(name), name, "int64") { Int64($0) }
    }

    /// The value as `Double` (float4/float8/numeric text, including "NaN" and "Infinity"); nil for NULL.
    public func double(_ position: Int) throws(PostgresError) -> Double? {
        try parse(text(position), "\(position)", "double", Self.double)
    }
    /// The value as `Double` (float4/float8/numeric text, including "NaN" and "Infinity"); nil for NULL.
    public func double(_ name: String) throws(PostgresError) -> Double? {
        try parse(text(name), name, "double", Self.double)
    }

    /// The value as `Bool` from PostgreSQL's "t"/"f"; nil for NULL.
    public func bool(_ position: Int) throws(PostgresError) -> Bool? {
        try parse(text(position), "\(position)", "boolean", Self.bool)
    }
    /// The value as `Bool` from PostgreSQL's "t"/"f"; nil for NULL.
    public func bool(_ name: String) throws(PostgresError) -> Bool? {
        try parse(text(name), name, "boolean", Self.bool)
    }

    private static func bool(_ text: String) -> Bool? {
        switch text {
        case "t": true
        case "f": false
        default: nil
        }
    }

    private static func double(_ text: String) -> Double? {
        switch text {
        case "Infinity": .infinity
        case "-Infinity": -.infinity
        default: Double(text)
        }
    }
}

/// Column names of one result, shared by all its rows, with a name-to-position map.
/// Immutable after creation, hence Sendable.
///
/// Most results a server reads have a handful of columns and are read by position, so
/// the map is only built for wide results; narrow ones look names up by a scan
/// (building the dictionary was a measurable share of a GET's CPU).
final class PostgresColumnIndex: Sendable {
    let names: [String]
    private let positions: [String: Int]?

    init(_ names: [String]) {
        self.names = names
        guard names.count > 16 else {
            positions = nil
            return
        }
        var positions: [String: Int] = [:]
        // The first column wins when a name repeats, as in `SELECT a.id, b.id`.
        for (position, name) in names.enumerated() where positions[name] == nil {
            positions[name] = position
        }
        self.positions = positions
    }

    /// The position of the first column called `name`.
    func position(of name: String) -> Int? {
        if let positions { return positions[name] }
        return names.firstIndex(of: name)
    }
}
