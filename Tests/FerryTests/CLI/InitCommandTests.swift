import FerryTestSupport
import Foundation
import Testing

/// `ferry init DIR`: the files it writes make an app that migrates, checks clean and
/// serves; a directory in use is refused, naming it.
@Suite struct InitCommandTests {
    @Test func aScaffoldMigratesChecksCleanAndIsRefusedTwice() throws {
        let parent = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-init-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: parent) }
        let directory = parent.appendingPathComponent("myapp").path
        let made = try FerryProcess.run(["init", directory])
        #expect(made.status == 0, "\(made.stderr)")
        for file in ["ferry.json", "README.md", "migrations/0001_first_tables.sql"] {
            #expect(FileManager.default.fileExists(atPath: directory + "/" + file), "\(file)")
            #expect(made.stdout.contains("created \(directory)/\(file)\n"))
        }
        let readme = try String(contentsOfFile: directory + "/README.md", encoding: .utf8)
        #expect(readme.hasPrefix("# myapp: an app on Ferry\n"))

        let again = try FerryProcess.run(["init", directory])
        #expect(again.status == 1)
        #expect(again.stderr.contains("\(directory) already exists and is not empty"), "\(again.stderr)")

        // Migrated from elsewhere: the config's migrations_dir is relative to the config file.
        let database = try ScratchDatabase.create(prefix: "ferry_init")
        defer { database.drop() }
        let env = ["FERRY_DATABASE_MIGRATION_URL": database.ownerURL, "FERRY_DATABASE_URL": database.appURL]
        let migrate = try FerryProcess.run(["migrate", "--config", directory + "/ferry.json"], environment: env)
        #expect(migrate.status == 0, "\(migrate.stdout)\n\(migrate.stderr)")
        #expect(migrate.stdout.contains("applied app 0001_first_tables.sql in "))
        #expect(!migrate.stdout.contains("warning:"), "\(migrate.stdout)")
        let check = try FerryProcess.run(["check", "--strict", "--config", directory + "/ferry.json"], environment: env)
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        #expect(check.stdout == "0 errors, 0 warnings in 2 synced tables\n")
    }
}
