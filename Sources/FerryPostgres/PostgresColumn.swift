// Typed reads by column name: a result resolves each name to its position once
// (`result.column("frontier", as: UInt64.self)`), and every row reads the value
// there, parsed as the column's Swift type. No name lookup and no allocation per
// row beyond what the value itself needs.

/// A Swift type a text-format column parses into.
public protocol PostgresDecodable: Sendable {
    /// The value of PostgreSQL's text `text`; nil when it does not parse.
    init?(postgresText text: String)
    /// The type's name in a decoding error.
    static var postgresTypeName: String { get }
}

extension String: PostgresDecodable {
    public init?(postgresText text: String) { self = text }
    public static var postgresTypeName: String { "text" }
}

extension Int: PostgresDecodable {
    public init?(postgresText text: String) { self.init(text) }
    public static var postgresTypeName: String { "integer" }
}

extension Int64: PostgresDecodable {
    public init?(postgresText text: String) { self.init(text) }
    public static var postgresTypeName: String { "int64" }
}

extension UInt64: PostgresDecodable {
    /// An `xid8`, say.
    public init?(postgresText text: String) { self.init(text) }
    public static var postgresTypeName: String { "uint64" }
}

extension Double: PostgresDecodable {
    /// float4/float8/numeric text, including "NaN" and "Infinity".
    public init?(postgresText text: String) {
        switch text {
        case "Infinity": self = .infinity
        case "-Infinity": self = -.infinity
        default:
            guard let value = Double(text) else { return nil }
            self = value
        }
    }
    public static var postgresTypeName: String { "double" }
}

extension Bool: PostgresDecodable {
    /// PostgreSQL's "t"/"f".
    public init?(postgresText text: String) {
        switch text {
        case "t": self = true
        case "f": self = false
        default: return nil
        }
    }
    public static var postgresTypeName: String { "boolean" }
}

/// A column of one result, found by name, read from its rows as `Value`.
public struct PostgresColumn<Value: PostgresDecodable>: Sendable {
    /// The column's name.
    public let name: String
    /// Its position in the result's rows.
    let position: Int
}

extension PostgresResult {
    /// The column called `name` (the first, when a name repeats), to read as
    /// `Value` from each row; a decoding error naming the result's columns
    /// when there is none, rows or not.
    public func column<Value>(_ name: String, as type: Value.Type = Value.self) throws(PostgresError) -> PostgresColumn<Value> {
        guard let position = columns.firstIndex(of: name) else {
            throw PostgresError(
                kind: .decoding, message: "no column named \"\(name)\" (the result has \(columns.joined(separator: ", ")))")
        }
        return PostgresColumn(name: name, position: position)
    }
}

extension PostgresRow {
    /// The value of `column`; nil for SQL NULL. A decoding error when the
    /// text does not parse as the column's type, or when `column` is another
    /// result's with more columns than this row.
    ///
    /// A method, not a subscript: another overload of `row[...]` made the
    /// type checker give up on long expressions that read rows.
    public func decode<Value>(_ column: PostgresColumn<Value>) throws(PostgresError) -> Value? {
        guard values.indices.contains(column.position) else {
            throw PostgresError(
                kind: .decoding, message: "column \(column.name) is at \(column.position), past this row's \(values.count) columns")
        }
        guard let text = values[column.position] else { return nil }
        guard let value = Value(postgresText: text) else {
            throw PostgresError(
                kind: .decoding, message: "column \(column.name): \"\(text.prefix(64))\" is not a valid \(Value.postgresTypeName)")
        }
        return value
    }
}
