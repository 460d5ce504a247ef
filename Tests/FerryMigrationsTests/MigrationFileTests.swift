import Foundation
import Testing
import FerryTestSupport
@testable import Ferry
@testable import FerryMigrations

@Suite struct MigrationFileTests {
    @Test(arguments: [
        ("0001_ferry_core.sql", 1), ("0002_example_app.sql", 2), ("7_x.sql", 7),
        ("123456789_a-b_C.sql", 123_456_789), ("0000_init.sql", 0),
    ])
    func wellFormedNames(name: String, version: Int) {
        #expect(MigrationFile.version(ofFileName: name) == version)
    }

    @Test(arguments: [
        "0001.sql", "_x.sql", "abc_x.sql", "0001_.sql", "0001_x.SQL", "0001_x.sql.bak",
        "0001 x.sql", "0001_bad name.sql", "1234567890_too_long.sql", "0001_é.sql", "x0001_a.sql",
    ])
    func malformedNames(name: String) {
        #expect(MigrationFile.version(ofFileName: name) == nil)
    }

    @Test func checksumIsSHA256OfTheBytes() {
        #expect(MigrationFile.checksum(of: Data()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(MigrationFile.checksum(of: Data("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test func byteOrderMarkIsStrippedFromTheScriptButNotTheChecksum() throws {
        let bytes = Data([0xEF, 0xBB, 0xBF] + Array("SELECT 1;".utf8))
        let file = try MigrationFile(fileName: "0001_a.sql", path: "/m/0001_a.sql", contents: bytes)
        #expect(file.script == "SELECT 1;")
        #expect(file.checksum == MigrationFile.checksum(of: bytes))
    }

    @Test func directoryLoadsInVersionOrderAndIgnoresOtherFiles() throws {
        let fixture = try MigrationFixture([
            "0010_last.sql": "SELECT 10;", "0002_second.sql": "SELECT 2;", "1_first.sql": "SELECT 1;",
            "README.md": "notes", ".0003_hidden.sql": "garbage", "notes.txt": "x",
        ])
        defer { fixture.destroy() }
        try FileManager.default.createDirectory(
            atPath: fixture.path + "/0004_a_directory.sql", withIntermediateDirectories: false)
        let files = try MigrationDirectory.load(path: fixture.path)
        #expect(files.map(\.fileName) == ["1_first.sql", "0002_second.sql", "0010_last.sql"])
        #expect(files.map(\.version) == [1, 2, 10])
        #expect(files[1].script == "SELECT 2;")
        #expect(files[1].path == fixture.path + "/0002_second.sql")
    }

    @Test func badlyNamedSQLFileIsAnError() throws {
        let fixture = try MigrationFixture(["0001_ok.sql": "", "2-oops.sql": ""])
        defer { fixture.destroy() }
        let error = #expect(throws: MigrationError.self) { try MigrationDirectory.load(path: fixture.path) }
        let text = "\(error.map { "\($0)" } ?? "")"
        #expect(text.contains("2-oops.sql"))
        #expect(text.contains("NNNN_name.sql"))
    }

    @Test func duplicateVersionsAreAnError() throws {
        let fixture = try MigrationFixture(["0002_a.sql": "", "002_b.sql": "", "0001_c.sql": ""])
        defer { fixture.destroy() }
        let error = #expect(throws: MigrationError.self) { try MigrationDirectory.load(path: fixture.path) }
        let text = error.map { "\($0)" } ?? ""
        #expect(text.contains("version 2"))
        #expect(text.contains("0002_a.sql") && text.contains("002_b.sql"))
    }

    @Test func missingDirectoryIsAnError() {
        let error = #expect(throws: MigrationError.self) {
            try MigrationDirectory.load(path: "/nonexistent/ferry/migrations")
        }
        #expect((error.map { "\($0)" } ?? "").contains("/nonexistent/ferry/migrations: it does not exist"))
    }

    @Test func invalidUTF8AndNULBytesAreErrors() throws {
        let fixture = try MigrationFixture([:])
        defer { fixture.destroy() }
        try fixture.write("0001_latin1.sql", bytes: Array("SELECT '".utf8) + [0xE9] + Array("';".utf8))
        let notUTF8 = #expect(throws: MigrationError.self) { try MigrationDirectory.load(path: fixture.path) }
        #expect((notUTF8.map { "\($0)" } ?? "").contains("0001_latin1.sql cannot be used: it is not valid UTF-8"))
        try fixture.remove("0001_latin1.sql")
        try fixture.write("0001_nul.sql", bytes: Array("SELECT 1;".utf8) + [0] + Array("DROP TABLE x;".utf8))
        let nul = #expect(throws: MigrationError.self) { try MigrationDirectory.load(path: fixture.path) }
        #expect((nul.map { "\($0)" } ?? "").contains("0001_nul.sql cannot be used: it contains a NUL byte"))
    }

    @Test func emptyDirectoryHasNoFiles() throws {
        let fixture = try MigrationFixture([:])
        defer { fixture.destroy() }
        #expect(try MigrationDirectory.load(path: fixture.path).isEmpty)
    }
}
