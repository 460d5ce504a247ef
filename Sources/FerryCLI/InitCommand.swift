import ArgumentParser
import Foundation

/// `ferry init DIR`: scaffolds an app: a configuration, a first migration, and the
/// commands to migrate, serve and try it.
struct InitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Create DIR with a configuration, a first migration (an owned table and a child table) and a README.",
        discussion: """
            Refuses a DIR that exists and is not empty. Nothing is connected to: run `ferry migrate` next.
            ferry.json points at the services `deploy/local.sh start` runs in a Ferry checkout, \
            read from the same variables local.sh reads: FERRY_PG_PORT (default 54329), FERRY_MC_PORT \
            (11299), FERRY_OWNER_PASSWORD and FERRY_APP_PASSWORD (its development passwords).
            """
    )

    @Argument(help: "The directory to create.")
    var directory: String

    func run() throws {
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        if manager.fileExists(atPath: directory, isDirectory: &isDirectory) {
            let empty = isDirectory.boolValue && ((try? manager.contentsOfDirectory(atPath: directory))?.isEmpty ?? false)
            guard empty else {
                throw CLIError(
                    "\(directory) already exists\(isDirectory.boolValue ? " and is not empty" : " and is a file"); "
                        + "ferry init writes only into a new or empty directory")
            }
        }
        let name = URL(fileURLWithPath: directory).standardizedFileURL.lastPathComponent
        let values = try LocalServices(environment: ProcessInfo.processInfo.environment).placeholders(dir: name)
        for (path, bytes) in Scaffold.files {
            let target = URL(fileURLWithPath: directory).appendingPathComponent(path)
            do {
                try manager.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
                var text = String(decoding: bytes, as: UTF8.self)
                for (placeholder, value) in values { text = text.replacingOccurrences(of: placeholder, with: value) }
                try Data(text.utf8).write(to: target, options: .withoutOverwriting)
            } catch {
                throw CLIError("cannot write \(target.path): \(error.localizedDescription)")
            }
            print("created \((directory as NSString).appendingPathComponent(path))")
        }
        print(
            """

            Next, with PostgreSQL and memcached running (in a Ferry checkout: deploy/local.sh start;
            their URLs are in \(directory)/ferry.json):

              cd \(directory)
              ferry migrate --config ferry.json
              ferry serve --config ferry.json

            \(directory)/README.md has the rest: a user, a token, and curl.
            """)
    }
}
