import Ferry
import FerryPostgres

/// Administrative commands connect as the owner role (`database.migration_url`).
enum OwnerConnection {
    static func open(_ config: FerryConfiguration) throws -> PostgresConnection {
        do {
            return try PostgresConnection(url: config.database.migrationURL, applicationName: "ferry")
        } catch {
            throw CLIError("cannot connect to PostgreSQL as the owner role: \(error.message)")
        }
    }
}
