import FerryPostgres

/// `ferry check`'s whole run on one database, as the serve role: the catalog checks
/// (`SchemaCheck`), the probes (`SchemaProbe`) and the ids a restore brought
/// from another cluster (`ForeignTransactionIDs`). `ferry check` prints it, and
/// `ferry serve` logs it at start.
public struct SchemaReport: Sendable {
    public var findings: [SchemaFinding]
    /// How many synced tables were checked.
    public var tables: Int

    public var errors: [SchemaFinding] { findings.filter { $0.severity == .error } }

    /// Connects to `url` (the serve role's) and checks the synced tables, serving `schema`.
    public static func run(url: String, schema: String, applicationName: String) throws -> SchemaReport {
        let connection = try PostgresConnection(url: url, applicationName: applicationName)
        defer { connection.close() }
        let role = try connection.query("SELECT current_user AS role").first?["role"] ?? nil
        let facts = try SchemaFacts.load(servedSchema: schema, role: role ?? "", connection: connection)
        let findings =
            SchemaCheck.findings(facts) + (try SchemaProbe.findings(facts, connection: connection))
            + (try ForeignTransactionIDs.findings(connection: connection))
        return SchemaReport(findings: findings, tables: facts.tables.count)
    }
}
