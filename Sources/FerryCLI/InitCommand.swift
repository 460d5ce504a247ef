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

    @Option(
        help: """
            The database ferry.json names: by default ferry, the one deploy/local.sh makes. An app beside \
            others in one cluster takes one of its own, which must exist before `ferry migrate` (init says how).
            """)
    var database = "ferry"

    func validate() throws {
        // It goes into two URLs unescaped, and into the CREATE DATABASE line init prints.
        guard let first = database.unicodeScalars.first, database.unicodeScalars.count <= 63,
            first == "_" || ("a"..."z").contains(first),
            database.unicodeScalars.allSatisfy({ $0 == "_" || ("a"..."z").contains($0) || ("0"..."9").contains($0) })
        else {
            throw ValidationError("--database is \"\(database)\": a database name here is 1 to 63 of a-z, 0-9 and _, not starting with a digit")
        }
    }

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
        let services = try LocalServices(environment: ProcessInfo.processInfo.environment)
        let values = services.placeholders(dir: name) + [("{{DATABASE}}", database)]
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
        // deploy/local.sh makes `ferry`; another database is the app's to create, as its owner.
        // The owner's URL (ferry.json's migration_url, on the maintenance database) carries
        // its password: createdb asked for it at a terminal, and without one asked again for ever.
        let ownerURL = "postgresql://ferry_owner:\(LocalServices.inURL(services.ownerPassword))@127.0.0.1:\(services.postgresPort)/postgres"
        let createLine =
            database == "ferry"
            ? "" : "  createdb --maintenance-db='\(ownerURL)' \(database)   # once: the database ferry.json names\n"
        print(
            """

            Next, with PostgreSQL and memcached running (in a Ferry checkout: deploy/local.sh start;
            their URLs are in \(directory)/ferry.json):

            \(createLine)  cd \(directory)
              ferry migrate --config ferry.json
              ferry serve --config ferry.json

            \(directory)/README.md has the rest: a user, a token, and curl.
            """)
    }
}
