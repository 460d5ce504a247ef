import ArgumentParser
import Ferry
import FerryMigrations

/// `ferry migrate status`: each migration as applied, pending, changed or missing.
struct MigrateStatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "List each migration, Ferry's own and the app's, as applied (with when), pending, changed or missing.",
        discussion: "Changes nothing. Exits 0 whatever the states; 1 when the files or the database cannot be read."
    )

    @OptionGroup var options: MigrateOptions

    func run() throws {
        let migrator = try options.migrator()
        print("status of \(options.target(migrator))")
        do {
            print(try migrator.status().statusReport())
        } catch {
            throw failure(error)
        }
    }
}
