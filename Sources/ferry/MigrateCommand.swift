import FerryMigrations
import ArgumentParser

/// `ferry migrate`: applies pending migrations (the default) or shows their status.
struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Apply the SQL migrations in migrations/ to the database, or show their status.",
        discussion: """
            Each NNNN_name.sql file runs once, in version order, in a transaction of its own, \
            as the owner role (database.migration_url, or --database-url). Applied files are \
            recorded with their sha256 in ferry.schema_migrations; a file changed after it was \
            applied stops the run before anything runs. Concurrent runs against one database \
            take turns through an advisory lock.

            `ferry migrate` is `ferry migrate apply`.
            """,
        subcommands: [MigrateApplyCommand.self, MigrateStatusCommand.self],
        defaultSubcommand: MigrateApplyCommand.self
    )
}
