import ArgumentParser
import Ferry

/// `ferry token issue NAME`: prints a new bearer token for a user.
struct TokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token", abstract: "Manage bearer tokens.", subcommands: [Issue.self]
    )

    struct Issue: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Issue a bearer token for a user and print it.")

        @OptionGroup var options: ConfigOptions

        @Argument(help: "The user's name.")
        var name: String

        // Unconditional: a negative number is the option's value, refused by `validate`,
        // not an unknown flag ("Missing value for '--ttl'").
        @Option(parsing: .unconditional, help: "Lifetime in seconds (default: auth.token_ttl_seconds).")
        var ttl: Int?

        func validate() throws {
            if let ttl, ttl < 1 { throw ValidationError("--ttl must be a positive number of seconds, not \(ttl)") }
        }

        func run() throws {
            let config = try options.load()
            let connection = try OwnerConnection.open(config)
            defer { connection.close() }
            guard
                let issued = try AuthService.issueToken(
                    name: name, ttlSeconds: ttl ?? config.auth.tokenTTLSeconds, connection: connection)
            else { throw CLIError("no user named \(name)") }
            print(issued.token)
        }
    }
}
