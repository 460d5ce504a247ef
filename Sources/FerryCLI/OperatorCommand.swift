import ArgumentParser
import Ferry
import FerryPostgres
import Foundation

/// `ferry operator add|list|role|remove|token`: the people who may open the
/// console at /console, apart from the app's users (docs/CONSOLE.md).
struct OperatorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "operator", abstract: "Manage console operators (not app users).",
        subcommands: [Add.self, List.self, Role.self, Remove.self, Token.self]
    )

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create an operator. The password is read from standard input (one line), never from arguments.",
            discussion: "Example: printf '%s\\n' \"$PASSWORD\" | ferry operator add dana --role admin"
        )

        @OptionGroup var options: ConfigOptions

        @Argument(help: "The operator's name.")
        var name: String

        @Option(help: "viewer (reads only) or admin (also revokes tokens and purges).")
        var role: String = "viewer"

        func run() throws {
            let config = try options.load()
            let password = try PasswordInput.read()
            try OperatorCommand.withOwner(config) { connection in
                let id = try OperatorAccounts.create(name: name, password: password, role: role, connection: connection)
                print("created operator \(name) (\(role), \(id))")
            }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List operators: name, role, live console tokens.")

        @OptionGroup var options: ConfigOptions

        func run() throws {
            try OperatorCommand.withOwner(try options.load()) { connection in
                let operators = try OperatorAccounts.list(connection: connection)
                if operators.isEmpty { print("no operators; add one with `ferry operator add NAME`") }
                for entry in operators { print("\(entry.name)\t\(entry.role)\t\(entry.liveTokens) live tokens") }
            }
        }
    }

    struct Role: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Change an operator's role.")

        @OptionGroup var options: ConfigOptions

        @Argument(help: "The operator's name.")
        var name: String

        @Argument(help: "viewer or admin.")
        var role: String

        func run() throws {
            try OperatorCommand.withOwner(try options.load()) { connection in
                guard try OperatorAccounts.setRole(name: name, role: role, connection: connection) else {
                    throw CLIError("no operator named \(name)")
                }
                print("\(name) is now \(role)")
            }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove an operator and end their console tokens (their audit entries stay).")

        @OptionGroup var options: ConfigOptions

        @Argument(help: "The operator's name.")
        var name: String

        func run() throws {
            try OperatorCommand.withOwner(try options.load()) { connection in
                guard try OperatorAccounts.remove(name: name, connection: connection) else { throw CLIError("no operator named \(name)") }
                print("removed operator \(name)")
            }
        }
    }

    struct Token: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a new console token for an operator (for scripts; the console signs in with the password).")

        @OptionGroup var options: ConfigOptions

        @Argument(help: "The operator's name.")
        var name: String

        // Unconditional: a negative number is the option's value, refused by `validate`,
        // not an unknown flag ("Missing value for '--ttl'").
        @Option(parsing: .unconditional, help: "Lifetime in seconds (default: console.token_ttl_seconds).")
        var ttl: Int?

        func validate() throws {
            if let ttl, ttl < 1 { throw ValidationError("--ttl must be a positive number of seconds, not \(ttl)") }
        }

        func run() throws {
            let config = try options.load()
            let ttl = ttl ?? config.console.tokenTTLSeconds
            try OperatorCommand.withOwner(config) { connection in
                guard let issued = try OperatorAccounts.issueToken(name: name, ttlSeconds: ttl, connection: connection) else {
                    throw CLIError("no operator named \(name)")
                }
                print(issued.token)
            }
        }
    }

    /// Runs `body` on an owner connection, with an operator failure in its own words.
    static func withOwner(_ config: FerryConfiguration, _ body: (PostgresConnection) throws -> Void) throws {
        let connection = try OwnerConnection.open(config)
        defer { connection.close() }
        do {
            try body(connection)
        } catch let failure as OperatorAccounts.Failure {
            throw CLIError(failure.description)
        }
    }
}
