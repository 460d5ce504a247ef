/// One SQL statement with text-format parameters, as sent in a pipeline.
public struct PostgresStatement: Sendable, Hashable {
    /// SQL text with `$1`, `$2`… placeholders; exactly one statement.
    public var sql: String
    /// Parameter values in PostgreSQL text format; nil is SQL NULL.
    public var params: [String?]

    /// Creates a statement from SQL and its text-format parameters.
    public init(_ sql: String, _ params: [String?] = []) {
        self.sql = sql
        self.params = params
    }
}
