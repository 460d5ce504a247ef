import ArgumentParser
import Ferry
import FerryPostgres

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
                throw CLIError(problem.detail ?? problem.code.rawValue)
            }
        }
    }
}
