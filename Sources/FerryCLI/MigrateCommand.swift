import FerryMigrations
import ArgumentParser

/// `ferry migrate`: applies pending migrations (the default) or shows their status.
struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Apply Ferry's own migrations, then the app's, to the database, or show their status.",
        discussion: """
            Ferry's own migrations (schema ferry) are built into this binary; the app's are the \
            NNNN_name.sql files of its directory (--dir, or database.migrations_dir). Ferry's pending \
            files run first, then the app's, each once, in version order, in a transaction of its \
            own, as the owner role (database.migration_url, or --database-url). The two are \
            recorded apart, with their sha256, in ferry.schema_migrations, so each is numbered on \
            its own; a file changed after it was applied stops the run before anything runs, and an \
            app file that creates or alters objects in schema ferry is rolled back. Between the two, \
            Ferry's repeatable files (its functions, triggers and policies, one file per family) run \
            together in one transaction, those whose sha256 differs from the one recorded in \
            ferry.schema_repeatables. Concurrent runs against one database take turns through an \
            advisory lock.

            `ferry migrate` is `ferry migrate apply`.
            """,
        subcommands: [MigrateApplyCommand.self, MigrateStatusCommand.self],
        defaultSubcommand: MigrateApplyCommand.self
    )
}
