import ArgumentParser
import Ferry

/// `ferry version`: prints the release and the linked C libraries.
struct VersionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "version", abstract: "Print Ferry's version.")

    func run() {
        print("ferry \(FerryVersion.current)")
        print("libpq \(FerryVersion.libpq)")
        print("libmemcached \(FerryVersion.libmemcached)")
    }
}
