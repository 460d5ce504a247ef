// A statement written as one string, its values interpolated as parameters, for the
// modules below Ferry (migrations, test support): Ferry's own statements bind typed
// values through its `SQLQuery`, which makes one of these.

/// A statement written as one string, its values interpolated as binds:
///
///     try connection.query("SELECT id FROM t WHERE name = \(bind: name)" as PostgresStatement)
///
/// `\(bind:)` appends the value to the parameters and its `$n` to the text, so
/// the numbers cannot drift from the values. There is no interpolation of a
/// bare value: only literal SQL and binds reach the text.
extension PostgresStatement: ExpressibleByStringInterpolation {
    public init(stringLiteral sql: String) { self.init(sql) }

    public init(stringInterpolation: StringInterpolation) { self.init(stringInterpolation.sql, stringInterpolation.params) }

    public struct StringInterpolation: StringInterpolationProtocol {
        fileprivate var sql = ""
        fileprivate var params: [String?] = []

        public init(literalCapacity: Int, interpolationCount: Int) {
            sql.reserveCapacity(literalCapacity + 4 * interpolationCount)
            params.reserveCapacity(interpolationCount)
        }

        public mutating func appendLiteral(_ literal: String) { sql += literal }

        /// A value in PostgreSQL's text format (nil: NULL), as the next parameter.
        public mutating func appendInterpolation(bind value: String?) {
            params.append(value)
            sql += "$" + String(params.count)
        }

        /// An integer, as the next parameter.
        public mutating func appendInterpolation<Integer: BinaryInteger>(bind value: Integer) { appendInterpolation(bind: String(value)) }

        /// A boolean, as the next parameter.
        public mutating func appendInterpolation(bind value: Bool) { appendInterpolation(bind: value ? "true" : "false") }
    }
}

extension PostgresConnection {
    /// Runs `statement` through the extended protocol, like `query(_:_:)`.
    public func query(_ statement: PostgresStatement) throws(PostgresError) -> PostgresResult {
        try query(statement.sql, statement.params)
    }
}
