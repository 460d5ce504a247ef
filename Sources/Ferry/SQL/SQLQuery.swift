/// A statement written as one string, its values interpolated as binds:
///
///     let query: SQLQuery = "SELECT t.id FROM \(id: table) t WHERE t.id = \(bind: .text(id))"
///
/// `\(bind:)` appends the value to the binds and its `$n` to the text, so the
/// numbers cannot drift from the values. Nothing else reaches the text but
/// literal SQL, identifiers of the introspected schema (`\(id:)`, quoted)
/// and fragments Ferry built from the catalog (`\(sql:)`); there is no
/// interpolation of a bare `String`, so a value is never spliced in by
/// mistake. A statement assembled from fragments in several functions binds
/// through ``SQLBinds`` instead.
///
/// The model is postgres-nio's `PostgresQuery`; this one makes the
/// ``PlannedStatement`` that `PostgresGateway` runs.
struct SQLQuery: Sendable, Equatable, ExpressibleByStringInterpolation {
    let sql: String
    let binds: [Bind]

    init(stringLiteral sql: String) {
        self.sql = sql
        binds = []
    }

    init(stringInterpolation: StringInterpolation) {
        sql = stringInterpolation.sql
        binds = stringInterpolation.binds
    }

    /// What `PostgresGateway` runs.
    var statement: PlannedStatement { PlannedStatement(sql: sql, binds: binds) }

    struct StringInterpolation: StringInterpolationProtocol {
        fileprivate(set) var sql = ""
        fileprivate(set) var binds: [Bind] = []

        init(literalCapacity: Int, interpolationCount: Int) {
            sql.reserveCapacity(literalCapacity + 4 * interpolationCount)
            binds.reserveCapacity(interpolationCount)
        }

        mutating func appendLiteral(_ literal: String) { sql += literal }

        /// A value, as the next parameter.
        mutating func appendInterpolation(bind value: Bind) {
            binds.append(value)
            sql += "$" + String(binds.count)
        }

        /// A text value, as the next parameter.
        mutating func appendInterpolation(bind value: String) { appendInterpolation(bind: .text(value)) }

        /// An integer value, as the next parameter.
        mutating func appendInterpolation(bind value: Int) { appendInterpolation(bind: .int(Int64(value))) }

        /// A boolean value, as the next parameter.
        mutating func appendInterpolation(bind value: Bool) { appendInterpolation(bind: .bool(value)) }

        /// An identifier of the introspected schema, quoted.
        mutating func appendInterpolation(id identifier: SQLIdentifier) { sql += identifier.quoted }

        /// A fragment of SQL that Ferry built from the catalog and literals
        /// (never from a request's values), placeholders already numbered.
        mutating func appendInterpolation(sql fragment: String) { sql += fragment }
    }
}

extension PlannedStatement {
    /// The statement of an interpolated query.
    init(_ query: SQLQuery) { self.init(sql: query.sql, binds: query.binds) }
}
