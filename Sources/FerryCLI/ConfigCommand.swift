import ArgumentParser
import Ferry

/// `ferry config`: checks a configuration, or prints the example with every default.
struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Check a configuration file, or print one with every key at its default.",
        discussion: "Exits 78 and names the key when the configuration is invalid."
    )

    @OptionGroup var options: ConfigOptions

    @Flag(help: "Print config.example.json (every key with its default) instead of checking.")
    var example = false

    @Flag(help: "Print the configuration reference as a Markdown table.")
    var reference = false

    func run() throws {
        if reference {
            print(ConfigurationKey.referenceMarkdown(), terminator: "")
            return
        }
        if example {
            print(ConfigurationKey.exampleJSON(), terminator: "")
            return
        }
        _ = try options.load()
        print("configuration ok")
    }
}
