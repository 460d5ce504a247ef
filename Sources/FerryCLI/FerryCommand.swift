import ArgumentParser
import Ferry
import FerryMigrations

/// The `ferry` command: serve the API, migrate the database, manage users and tokens.
@main
struct FerryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ferry",
        abstract: "Ferry, an offline-first sync server for PostgreSQL.",
        // `ferry --version` as most tools answer it; `ferry version` adds the C libraries.
        version: FerryVersion.current,
        subcommands: [
            ServeCommand.self, MigrateCommand.self, CheckCommand.self, InitCommand.self, UserCommand.self, TokenCommand.self,
            OperatorCommand.self, VersionCommand.self, ConfigCommand.self, PurgeCommand.self, GenerateCommand.self,
        ],
        defaultSubcommand: nil
    )
}
