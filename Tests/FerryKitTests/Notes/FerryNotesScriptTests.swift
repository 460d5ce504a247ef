import FerryTestSupport
import Foundation
import Testing

/// ferry-notes with its commands piped in, no terminal: each command's screen
/// is printed after the last, so one run shows every step.
@Suite struct FerryNotesScriptTests {
    /// Runs ferry-notes with `script` on standard input; the screens it printed.
    static func run(_ script: [String], server: FerryServer, user: String, directory: URL) throws -> [NotesScreen] {
        let process = Process()
        process.executableURL = try FerryProcess.executable(named: "ferry-notes")
        process.arguments = ["--server", server.baseURL.absoluteString, "--user", user, "--data-dir", directory.path, "--no-live"]
        process.environment = ["FERRY_NOTES_PASSWORD": "secret-\(user)", "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
        input.fileHandleForWriting.write(Data((script.joined(separator: "\n") + "\n").utf8))
        try input.fileHandleForWriting.close()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "ferry-notes exited with \(process.terminationStatus):\n\(text)")
        return text.components(separatedBy: "\n==== screen\n").dropFirst().map { NotesScreen(text: $0) }
    }

    @Test func termsAreAddedEditedMovedDeletedAndSyncedToASecondDevice() async throws {
        let ferry = try FerryServer()
        defer { ferry.stop() }
        _ = try await ferry.user("carol")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-notes-" + UUID().uuidString)
        defer { try? FileManager.default.removeItem(at: directory) }

        let screens = try Self.run(
            [
                "new set French", "add bonjour = hello", "add merci = thanks", "add chat = cat",
                "move 3 1", "edit 2 bonjour = good day", "del 3", "frobnicate", "sync",
            ], server: ferry, user: "carol", directory: directory.appendingPathComponent("laptop"))
        // The first screen after signing in, then one per command.
        try #require(screens.count == 10, "\(screens.count) screens:\n\(screens.map(\.text).joined(separator: "\n\n"))")
        #expect(screens[4].texts == ["bonjour = hello", "merci = thanks", "chat = cat"])
        #expect(screens[4].rows.allSatisfy { $0.state == "pending" } && screens[4].count("pending") == 4)
        #expect(screens[5].texts == ["chat = cat", "bonjour = hello", "merci = thanks"], "move 3 1 puts chat first")
        #expect(screens[7].texts == ["chat = cat", "bonjour = good day"])
        #expect(screens[8].contains("note: unknown command \"frobnicate\""), "\(screens[8])")
        #expect(screens[9].settled && screens[9].texts == ["chat = cat", "bonjour = good day"], "\(screens[9])")

        // A second device of the same user starts empty and fills from the server.
        let phone = try Self.run(["open 1"], server: ferry, user: "carol", directory: directory.appendingPathComponent("phone"))
        #expect(phone.first?.texts == ["French (2 terms)"])
        #expect(phone.last?.texts == ["chat = cat", "bonjour = good day"] && phone.last?.settled == true, "\(phone.last?.text ?? "")")
    }

    @Test func offlineEditsWaitShowTheErrorAndGoUpOnline() async throws {
        let ferry = try FerryServer()
        defer { ferry.stop() }
        _ = try await ferry.user("dave")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-notes-" + UUID().uuidString)
        defer { try? FileManager.default.removeItem(at: directory) }
        let screens = try Self.run(
            ["open 1", "offline", "new set German", "add hund = dog", "sync", "online"],
            server: ferry, user: "dave", directory: directory)
        try #require(screens.count == 7)
        #expect(screens[1].contains("note: there is no set 1; sets lists 0"), "a number off the list is answered, not a crash")
        let offline = screens[5]
        #expect(offline.contains("mode: OFFLINE") && offline.count("pending") == 2)
        #expect(offline.contains("last error: offline") && offline.contains("note: sync: sync failed, edits kept"), "\(offline)")
        #expect(offline.rows == [.init(state: "pending", text: "hund = dog")])
        let online = screens[6]
        #expect(online.settled && online.contains("last error: none") && online.contains("note: online: synced"), "\(online)")
    }
}

/// ferry-notes signed in with an identity provider's JWT (issue 36): the
/// token command's JWT is the bearer of every sync, and a second device of the
/// same provider user sees what the first wrote.
@Suite struct FerryNotesJWTTests {
    @Test func aJWTFromTheTokenCommandSignsInAndSyncs() async throws {
        let idp = try TestIdentityProvider()
        defer { idp.stop() }
        let providers = #"[{"issuer": "\#(idp.issuer)", "audience": "\#(idp.audience)", "jwks_url": "\#(idp.jwksURL)"}]"#
        let ferry = try FerryServer(settings: ["FERRY_AUTH_JWT_PROVIDERS": providers])
        defer { ferry.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-notes-jwt-" + UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let tokenFile = directory.appendingPathComponent("token")
        try Data(idp.token(subject: "erin").utf8).write(to: tokenFile)

        func run(_ script: [String], device: String) throws -> [NotesScreen] {
            let process = Process()
            process.executableURL = try FerryProcess.executable(named: "ferry-notes")
            process.arguments = [
                "--server", ferry.baseURL.absoluteString, "--token-command", "cat '\(tokenFile.path)'",
                "--data-dir", directory.appendingPathComponent(device).path, "--no-live",
            ]
            process.environment = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"]
            let input = Pipe(), output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            process.standardError = output
            try process.run()
            input.fileHandleForWriting.write(Data((script.joined(separator: "\n") + "\n").utf8))
            try input.fileHandleForWriting.close()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "ferry-notes exited with \(process.terminationStatus):\n\(text)")
            #expect(!text.contains(try String(contentsOf: tokenFile, encoding: .utf8)), "the token is never shown")
            return text.components(separatedBy: "\n==== screen\n").dropFirst().map { NotesScreen(text: $0) }
        }

        let laptop = try run(["new set Tokens", "open 1", "add jwt = a signed token", "sync"], device: "laptop")
        #expect(laptop.last?.settled == true && laptop.last?.texts == ["jwt = a signed token"], "\(laptop.last?.text ?? "")")
        // A new token for the same user (its first one expired, say): the same account, the same rows.
        try Data(idp.token(subject: "erin", extra: [("jti", "second")]).utf8).write(to: tokenFile)
        let phone = try run(["open 1"], device: "phone")
        #expect(phone.first?.texts == ["Tokens (1 terms)"], "\(phone.first?.text ?? "")")
        #expect(phone.last?.texts == ["jwt = a signed token"] && phone.last?.settled == true, "\(phone.last?.text ?? "")")
    }
}
