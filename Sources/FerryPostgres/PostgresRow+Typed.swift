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
