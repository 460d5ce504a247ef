import FerryPostgres
import Foundation

/// What `ferry check` learns only by running statements as a user would: policies
/// that recurse into each other, and reads that fail for any other reason.
///
/// Each table is read (`SELECT 1 … LIMIT 1`) and an update is planned (`EXPLAIN
/// UPDATE … WHERE false`) as the serve role, with a user id no row belongs to, in a
/// transaction that is rolled back: nothing is written and no row is seen.
public enum SchemaProbe {
    public static func findings(_ facts: SchemaFacts, connection: PostgresConnection) throws(PostgresError) -> [SchemaFinding] {
        var found: [SchemaFinding] = []
        for table in facts.tables where table.schema == facts.servedSchema && table.readable {
            var probes = ["SELECT 1 FROM \(table.name) LIMIT 1"]
            if table.column("is_deleted")?.updatable == true {
                probes.append("EXPLAIN UPDATE \(table.name) SET is_deleted = is_deleted WHERE false")
            }
            try connection.execute("BEGIN")
            _ = try connection.run("SELECT set_config('ferry.user_id', \(bind: UUID().uuidString.lowercased()), true)")
            for probe in probes {
                guard let error = try attempt(probe, on: connection) else { continue }
                if let finding = finding(error, table: table.name) { found.append(finding) }
                break
            }
            try connection.execute("ROLLBACK")
        }
        return found
    }

    /// Runs `sql` under a savepoint; its error, with the transaction usable again.
    private static func attempt(_ sql: String, on connection: PostgresConnection) throws(PostgresError) -> PostgresError? {
        try connection.execute("SAVEPOINT probe")
        do {
            _ = try connection.query(sql)
            try connection.execute("RELEASE SAVEPOINT probe")
            return nil
        } catch {
            try connection.execute("ROLLBACK TO SAVEPOINT probe")
            return error
        }
    }

    /// The finding for a failed probe, nil for one the catalog checks report already
    /// (a function the role may not execute, a missing grant).
    static func finding(_ error: PostgresError, table: String) -> SchemaFinding? {
        switch error.sqlState {
        case "42P17":
            return .init(
                .error, "policy_recursion", table,
                "its policies recurse (\(error.message)), so every statement on it fails",
                fix: "read the other table in a SECURITY DEFINER function, as the sync rules do, or give both tables sync rules")
        case "42501":
            return nil
        default:
            return .init(
                .error, "unreadable", table, "reading it as a user fails: \(error.message)",
                fix: "run the same SELECT as the serve role with ferry.user_id set, and fix what it says")
        }
    }
}
