import Ferry
import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Testing

/// `ferry generate swift` as a person runs it: against a running `ferry serve`
/// (its /openapi.json) or a saved document; and CI's check that the study
/// example's committed models are what the schema generates.
@Suite struct GenerateSwiftCommandTests {
    /// A scratch database served by a real `ferry serve`; `prepare` runs as
    /// the owner before the server starts (it reads the tables at start).
    static func serving(_ prepare: (ScratchDatabase) throws -> Void = { _ in }) throws -> (ScratchDatabase, FerryServeProcess) {
        let database = try ScratchDatabase()
        do {
            try prepare(database)
            return (database, try FerryServeProcess(databaseURL: database.appURL, settings: ["FERRY_DATABASE_MIGRATION_URL": database.ownerURL]))
        } catch {
            database.drop()
            throw error
        }
    }

    static func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("ferry-generate-\(UUID().uuidString)")
    }

    /// CI regenerates the study example's models from the schema and fails when
    /// they differ from what is committed. To accept a change of the schema,
    /// run with `FERRY_RECORD_MODELS=1` (it writes them) and review the diff.
    @Test func theStudyExamplesCommittedModelsAreWhatTheSchemaGenerates() throws {
        let (database, serve) = try Self.serving()
        defer { serve.stop(); database.drop() }
        let record = ProcessInfo.processInfo.environment["FERRY_RECORD_MODELS"] == "1"
        let result = try FerryProcess.run(
            ["generate", "swift", "--from", "http://127.0.0.1:\(serve.port)", "--output", "examples/study/Models"]
                + (record ? [] : ["--check"]))
        #expect(
            result.status == 0,
            """
            \(result.stderr)
            The study example's models differ from what its schema generates. If the schema changed on purpose, run \
            FERRY_RECORD_MODELS=1 swift test --filter GenerateSwiftCommandTests, review the diff of examples/study/Models, and commit it.
            """)
    }

    /// A numeric id is generated, but said: FerryKit's ids are strings it makes offline.
    @Test func aNumericIDIsWarnedOf() throws {
        let listing = #"""
            {"resources": [
              {"name": "counters", "columns": [{"name": "id", "type": "bigint", "nullable": false, "writable": true},
                                               {"name": "count", "type": "integer", "nullable": false, "writable": true}]},
              {"name": "notes", "columns": [{"name": "id", "type": "uuid", "nullable": false, "writable": true}]}
            ]}
            """#
        let output = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: output) }
        let result = try FerryProcess.run(["generate", "swift", "--from", "-", "--output", output.path], input: listing)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stderr.contains("ferry generate swift: warning: counters.id is bigint:") && result.stderr.contains("Counter can neither"),
            "\(result.stderr)")
        #expect(!result.stderr.contains("notes.id"), "\(result.stderr)")
        #expect(FileManager.default.fileExists(atPath: output.appendingPathComponent("Counter.swift").path))
    }

    @Test func commentsReferencesAndRanksReachTheModelsFromTheServerOrASavedDocument() throws {
        let (database, serve) = try Self.serving { database in
            let owner = try database.connect()
            defer { owner.close() }
            _ = try owner.query("COMMENT ON COLUMN app.terms.word IS 'The word to learn, in the language the set teaches.'")
            _ = try owner.query("COMMENT ON COLUMN app.terms.definition IS 'What it means.\nAs the learner wrote it.'")
        }
        defer { serve.stop(); database.drop() }
        let output = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: output) }
        let served = try FerryProcess.run(["generate", "swift", "--from", "http://127.0.0.1:\(serve.port)", "--output", output.path])
        #expect(served.status == 0, "\(served.stderr)")
        #expect(served.stdout.contains("8 files, 8 written, 0 removed"), "\(served.stdout)")
        let term = try String(contentsOf: output.appendingPathComponent("Term.swift"), encoding: .utf8)
        #expect(term.contains("public struct Term: FerryRankedRecord, Hashable {"))
        #expect(term.contains("    /// The word to learn, in the language the set teaches.\n    ///\n"))
        #expect(term.contains("    /// What it means.\n    /// As the learner wrote it.\n"))
        #expect(term.contains("    public var setID: FerryID<StudySet>\n"), "a required reference: typed, not optional")
        #expect(term.contains("    public var word: String?\n"), "not null, but the server fills it: nil until synced")
        #expect(term.contains("case setID = \"set_id\""))
        #expect(term.contains("public static let set = belongsTo(StudySet.self, key: \"set\", using: ForeignKey([\"set_id\"]))"))
        let set = try String(contentsOf: output.appendingPathComponent("StudySet.swift"), encoding: .utf8)
        #expect(set.contains("public var creatorID: FerryID<FerryUser>?"))
        #expect(set.contains("public var title: String\n"))
        #expect(set.contains("public static let terms = hasMany(Term.self, key: \"terms\", using: ForeignKey([\"set_id\"]))"))
        // The root of the study example's stream `set` (examples/study/migrations/0018_set_stream.sql).
        #expect(set.contains("public struct StudySet: FerryStreamRoot, Hashable {"), "\(set.prefix(400))")
        #expect(set.contains("    public static let stream = \"set\"\n"))
        #expect(!term.contains("FerryStreamRoot"), "a term roots no stream")

        // The same document saved, read from a file and from standard input: the same files.
        let document = try TestHTTPClient(port: serve.port).request("GET", "/openapi.json")
        #expect(document.text.contains("The word to learn") && document.text.contains("x-ferry-resource"))
        let saved = Self.temporaryDirectory().appendingPathExtension("json")
        defer { try? FileManager.default.removeItem(at: saved) }
        try Data(document.text.utf8).write(to: saved)
        let again = try FerryProcess.run(["generate", "swift", "--from", saved.path, "--output", output.path, "--check"])
        #expect(again.status == 0 && again.stdout.contains("8 files, as generated"), "\(again.stderr)")
        let piped = try FerryProcess.run(["generate", "swift", "--from", "-", "--output", output.path, "--check"], input: document.text)
        #expect(piped.status == 0, "\(piped.stderr)")
    }

    /// A GET /v1 listing (its `streams`) makes the same models as the OpenAPI
    /// document (its `x-ferry-streams`), stream roots included.
    @Test func aStreamsRootConformsToFerryStreamRootFromTheListingToo() throws {
        let (database, serve) = try Self.serving { database in
            let owner = try database.connect()
            defer { owner.close() }
            _ = try owner.query("SELECT ferry.sync_stream('folder', scope => 'app.folders')")
            _ = try owner.query("SELECT ferry.create_user('gen', 'gen-password-1')")
        }
        defer { serve.stop(); database.drop() }
        let owner = try database.connect()
        defer { owner.close() }
        let token = try #require(try AuthService.issueToken(name: "gen", ttlSeconds: 600, connection: owner)).token
        let listing = try TestHTTPClient(port: serve.port).request("GET", "/v1", headers: [("Authorization", "Bearer \(token)")])
        #expect(listing.status == 200 && listing.text.contains("\"streams\""), "\(listing.text.prefix(300))")
        let saved = Self.temporaryDirectory().appendingPathExtension("json")
        defer { try? FileManager.default.removeItem(at: saved) }
        try Data(listing.text.utf8).write(to: saved)
        let output = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: output) }
        let fromListing = try FerryProcess.run(["generate", "swift", "--from", saved.path, "--output", output.path])
        #expect(fromListing.status == 0, "\(fromListing.stderr)")
        let folder = try String(contentsOf: output.appendingPathComponent("Folder.swift"), encoding: .utf8)
        #expect(folder.contains("public struct Folder: FerryStreamRoot, Hashable {"), "\(folder.prefix(400))")
        #expect(folder.contains("public static let stream = \"folder\"") && folder.contains("what hangs from it (`folder_sets`)"))
        let set = try String(contentsOf: output.appendingPathComponent("StudySet.swift"), encoding: .utf8)
        #expect(set.contains("public static let stream = \"set\""))
        // The server's OpenAPI document generates the very same files.
        let fromDocument = try FerryProcess.run(
            ["generate", "swift", "--from", "http://127.0.0.1:\(serve.port)", "--output", output.path, "--check"])
        #expect(fromDocument.status == 0, "\(fromDocument.stderr)")
    }

    /// A table and a column named with a space (`app."Odd Things"`, `"Due Date"`): the
    /// type and property names are the words of the name, not `struct Odd Thing` (no
    /// Swift) and `due_Date`; the document's path is percent-encoded, as GET /v1's is.
    @Test func namesWithSpacesMakeSwiftNamesAndEncodedPaths() throws {
        let (database, serve) = try Self.serving { database in
            let owner = try database.connect()
            defer { owner.close() }
            _ = try owner.query(
                """
                CREATE TABLE app."Odd Things" (id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
                                               owner_id uuid NOT NULL DEFAULT ferry.current_user_id() REFERENCES ferry.users,
                                               "Due Date" text, "x-ray count" integer, due_date date)
                """)
            _ = try owner.query(#"SELECT ferry.sync_owned('app."Odd Things"', owner => 'owner_id')"#)
            _ = try owner.query(#"GRANT SELECT, INSERT, UPDATE ON app."Odd Things" TO ferry_app"#)
            // A second table whose name makes the same Swift type.
            _ = try owner.query(
                """
                CREATE TABLE app.odd_things (id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
                                             owner_id uuid NOT NULL DEFAULT ferry.current_user_id() REFERENCES ferry.users)
                """)
            _ = try owner.query(#"SELECT ferry.sync_owned('app.odd_things', owner => 'owner_id')"#)
        }
        defer { serve.stop(); database.drop() }
        let document = try TestHTTPClient(port: serve.port).request("GET", "/openapi.json")
        #expect(document.text.contains(#""/v1/Odd%20Things""#) && document.text.contains(#""/v1/Odd%20Things/{id}""#))
        #expect(!document.text.contains(#""/v1/Odd Things"#), "a raw space in a path")
        let output = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: output) }
        let served = try FerryProcess.run(["generate", "swift", "--from", "http://127.0.0.1:\(serve.port)", "--output", output.path])
        #expect(served.status == 0, "\(served.stderr)")
        let odd = try String(contentsOf: output.appendingPathComponent("OddThing.swift"), encoding: .utf8)
        #expect(odd.contains("public struct OddThing: "), "\(odd.prefix(400))")
        #expect(odd.contains("public var dueDate: String?") && odd.contains(#"case dueDate = "Due Date""#), "\(odd)")
        #expect(odd.contains("public var xRayCount: Int?") && odd.contains(#"case xRayCount = "x-ray count""#), "\(odd)")
        #expect(odd.contains(#"public static let resource = "Odd Things""#), "\(odd.prefix(600))")
        // Two names that make one Swift name: the later gets a number, and nothing is overwritten.
        #expect(odd.contains("public var dueDate2: String?") && odd.contains(#"case dueDate2 = "due_date""#), "\(odd)")
        let other = try String(contentsOf: output.appendingPathComponent("OddThing2.swift"), encoding: .utf8)
        #expect(other.contains("public struct OddThing2: ") && other.contains(#"public static let resource = "odd_things""#))
    }

    @Test func badInputIsRefusedWithAMessageNamingIt() throws {
        let output = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: output) }
        let notJSON = Self.temporaryDirectory().appendingPathExtension("json")
        defer { try? FileManager.default.removeItem(at: notJSON) }
        try Data("{\"openapi\": \"3.1.0\", \"components\": {\"schemas\": {}}}".utf8).write(to: notJSON)
        let cases: [([String], String)] = [
            (["--from", "/nonexistent/openapi.json"], "/nonexistent/openapi.json: no such file, or it cannot be read"),
            (["--from", notJSON.path], "has no x-ferry-resource in its schemas"),
            (["--from", "https://sync.example.com"], "only http:// URLs are read directly; for https, pipe curl's output into --from -"),
            (["--from", "http://127.0.0.1:\(FreePort.next())"], "cannot connect to 127.0.0.1"),
        ]
        for (arguments, message) in cases {
            let result = try FerryProcess.run(["generate", "swift"] + arguments + ["--output", output.path])
            #expect(result.status != 0 && result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: output.path), "nothing written")

        // --check names the file that differs, and a hand-written file in the directory is never touched.
        let (database, serve) = try Self.serving()
        defer { serve.stop(); database.drop() }
        let from = "http://127.0.0.1:\(serve.port)"
        _ = try FerryProcess.run(["generate", "swift", "--from", from, "--output", output.path])
        try Data("// mine\n".utf8).write(to: output.appendingPathComponent("Extensions.swift"))
        try Data("// Generated by `ferry generate swift`, then edited by hand\n".utf8).write(to: output.appendingPathComponent("Folder.swift"))
        let check = try FerryProcess.run(["generate", "swift", "--from", from, "--output", output.path, "--check"])
        #expect(check.status == 1 && check.stderr.contains("Folder.swift differs") && !check.stderr.contains("Extensions"), "\(check.stderr)")
        let written = try FerryProcess.run(["generate", "swift", "--from", from, "--output", output.path])
        #expect(written.status == 0 && written.stdout.contains("1 written"), "\(written.stdout)")
        #expect(try String(contentsOf: output.appendingPathComponent("Extensions.swift"), encoding: .utf8) == "// mine\n")
        // A file of the same name that it did not write is not overwritten.
        try Data("// mine too\n".utf8).write(to: output.appendingPathComponent("Term.swift"))
        let clash = try FerryProcess.run(["generate", "swift", "--from", from, "--output", output.path])
        #expect(clash.status == 1 && clash.stderr.contains("Term.swift exists and was not written by ferry generate swift"), "\(clash.stderr)")
    }
}
