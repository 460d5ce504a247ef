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

    /// The configuration it writes reaches deploy/local.sh's services as the guide starts
    /// them: their default ports, or the ones FERRY_PG_PORT / FERRY_MC_PORT moved them to
    /// (issue 48: it pointed at 5432 with no password, and the guide's migrate failed).
    @Test func theConfigurationPointsAtTheServicesDeployLocalStarts() throws {
        let parent = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-init-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: parent) }
        let plain = try FerryProcess.run(["init", parent.appendingPathComponent("plain").path])
        #expect(plain.status == 0, "\(plain.stderr)")
        let defaults = try String(contentsOfFile: parent.appendingPathComponent("plain/ferry.json").path, encoding: .utf8)
        #expect(defaults.contains(#""url": "postgresql://ferry_app:ferry_app@127.0.0.1:54329/ferry""#), "\(defaults)")
        #expect(defaults.contains(#""migration_url": "postgresql://ferry_owner:ferry_owner@127.0.0.1:54329/ferry""#))
        #expect(defaults.contains(#""servers": ["127.0.0.1:11299"]"#))

        let moved = try FerryProcess.run(
            ["init", parent.appendingPathComponent("moved").path],
            environment: [
                "FERRY_PG_PORT": "54399", "FERRY_MC_PORT": "11399",
                "FERRY_APP_PASSWORD": "s3cret/\"x",
            ])
        #expect(moved.status == 0, "\(moved.stderr)")
        let text = try String(contentsOfFile: parent.appendingPathComponent("moved/ferry.json").path, encoding: .utf8)
        #expect(text.contains(#""url": "postgresql://ferry_app:s3cret%2F%22x@127.0.0.1:54399/ferry""#), "\(text)")
        #expect(text.contains(#""servers": ["127.0.0.1:11399"]"#))
        #expect((try? JSONSerialization.jsonObject(with: Data(text.utf8))) != nil, "still JSON: \(text)")

        // A database of the app's own, beside local.sh's `ferry` (which may hold another app's schema).
        let own = try FerryProcess.run(["init", parent.appendingPathComponent("own").path, "--database", "myapp"])
        #expect(own.status == 0, "\(own.stderr)")
        let ownText = try String(contentsOfFile: parent.appendingPathComponent("own/ferry.json").path, encoding: .utf8)
        #expect(ownText.contains(#""url": "postgresql://ferry_app:ferry_app@127.0.0.1:54329/myapp""#), "\(ownText)")
        #expect(ownText.contains(#""migration_url": "postgresql://ferry_owner:ferry_owner@127.0.0.1:54329/myapp""#))
        #expect(
            own.stdout.contains("createdb --maintenance-db='postgresql://ferry_owner:ferry_owner@127.0.0.1:54329/postgres' myapp"),
            "\(own.stdout)")
        #expect(!plain.stdout.contains("createdb"), "local.sh makes ferry")
        let badName = try FerryProcess.run(["init", parent.appendingPathComponent("badname").path, "--database", "my-app/x"])
        #expect(badName.status != 0 && badName.stderr.contains(#"--database is "my-app/x""#), "\(badName.stderr)")
        #expect(!FileManager.default.fileExists(atPath: parent.appendingPathComponent("badname").path))

        let bad = try FerryProcess.run(["init", parent.appendingPathComponent("bad").path], environment: ["FERRY_PG_PORT": "5432x"])
        #expect(bad.status == 1)
        #expect(bad.stderr.contains(#"FERRY_PG_PORT is "5432x", not a port"#), "\(bad.stderr)")
        #expect(!FileManager.default.fileExists(atPath: parent.appendingPathComponent("bad").path))
    }
}
