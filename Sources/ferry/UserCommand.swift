import ArgumentParser
import Ferry
import FerryPostgres
import Foundation

/// `ferry user add NAME`: creates a user, reading the password from standard input.
struct UserCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user", abstract: "Manage users.", subcommands: [Add.self]
    )

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a user. The password is read from standard input (one line), never from arguments.",
            discussion: "Example: printf '%s\\n' \"$PASSWORD\" | ferry user add alice"
        )

        @OptionGroup var options: ConfigOptions

        @Argument(help: "The new user's name.")
        var name: String

        func run() throws {
            let config = try options.load()
            let password = try PasswordInput.read()
            let connection = try OwnerConnection.open(config)
            defer { connection.close() }
            do {
                let id = try AuthService.createUser(name: name, password: password, connection: connection)
                print("created user \(name) (\(id))")
            } catch let problem as Problem {
                throw CLIError(problem.detail ?? problem.code)
            }
        }
    }
}

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

        @Option(help: "Lifetime in seconds (default: auth.token_ttl_seconds).")
        var ttl: Int?

        func run() throws {
            let config = try options.load()
            let connection = try OwnerConnection.open(config)
            defer { connection.close() }
            guard let issued = try AuthService.issueToken(
                name: name, ttlSeconds: ttl ?? config.auth.tokenTTLSeconds, connection: connection)
            else { throw CLIError("no user named \(name)") }
            print(issued.token)
        }
    }
}

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

/// A command failure: the message goes to standard error and the exit status is 1.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ message: String) { description = message }
}
