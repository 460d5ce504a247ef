/// One line of `ferry.access_scopes`: gaining or losing access to a row of
/// `scope` covers the rows of `member` whose `column` equals that row's id.
public struct AccessScope: Sendable, Equatable {
    /// The scope resource (e.g. `study_sets`).
    public let scope: String
    /// A member resource (e.g. `terms`, or `study_sets` itself).
    public let member: String
    /// The member's column that holds the scope row's id.
    public let column: String
    /// A member row is readable only while its scope row is (migration 0015):
    /// Index may then read members through the scope rows the caller can read.
    public let readThroughScope: Bool

    /// The statement that reads every scope of `schema` (run without a caller:
    /// the scopes are not secret, and RLS does not apply to `ferry.access_scopes`).
    static func statement(schema: String) -> PlannedStatement {
        var binds = SQLBinds()
        let schema = binds.bind(.text(schema))
        return binds.statement(
            """
            SELECT sc.relname AS scope_name, mc.relname AS member_name, s.member_column, s.read_through_scope
              FROM ferry.access_scopes s
              JOIN pg_class sc ON sc.oid = s.scope_table JOIN pg_namespace sn ON sn.oid = sc.relnamespace
              JOIN pg_class mc ON mc.oid = s.member_table JOIN pg_namespace mn ON mn.oid = mc.relnamespace
             WHERE sn.nspname = \(schema) AND mn.nspname = \(schema)
             ORDER BY 1, 2
            """)
    }
}
