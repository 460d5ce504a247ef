import ArgumentParser
import Ferry
import Foundation

/// The `--config FILE` option shared by every subcommand that needs settings.
struct ConfigOptions: ParsableArguments {
    @Option(name: .long, help: "A JSON configuration file (see config.example.json). FERRY_* variables override it.")
    var config: String?

    /// Loads the configuration, or exits non-zero naming the bad key.
    func load() throws -> FerryConfiguration {
        do {
            return try ConfigurationLoader.load(path: config)
        } catch {
            FileHandle.standardError.write(Data("ferry: \(error)\n".utf8))
            throw ExitCode(78)  // EX_CONFIG
        }
    }
}
