import ArgumentParser
import FerryKit
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `ferry-notes`: study sets and their terms in a terminal, kept in a local
/// SQLite file by FerryKit and synced with a Ferry server; offline on command.
@main
struct FerryNotes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ferry-notes",
        abstract: "Study sets and terms on a Ferry server, offline-first, in a terminal.",
        discussion: """
            Signs in, keeps one SQLite file per server and user, and redraws one screen after each command:
            \(NotesCommand.usage)
            The server, user and password come from the flags, else FERRY_NOTES_SERVER, FERRY_NOTES_USER and
            FERRY_NOTES_PASSWORD, else the terminal asks. With --token-command (or FERRY_NOTES_TOKEN_COMMAND), it signs
            in with the JWT that command prints instead, from the identity provider the server trusts.
            """)

    @Option(help: "The Ferry server's root URL, e.g. http://127.0.0.1:8080.")
    var server: String?

    @Option(help: "The user to sign in as.")
    var user: String?

    @Option(help: "The password (visible to `ps`: prefer FERRY_NOTES_PASSWORD or the prompt).")
    var password: String?

    @Option(
        name: .customLong("token-command"),
        help: "A shell command printing a JWT from your identity provider, run again when the server refuses it; replaces --user and the password.")
    var tokenCommand: String?

    @Option(name: .customLong("data-dir"), help: "Where the store files live (default: FERRY_NOTES_DIR or ~/.local/share/ferry-notes).")
    var dataDirectory: String?

    @Flag(inversion: .prefixedNo, help: "Sync by itself (FerryKit's continuous mode): edits go up as they are made, others' arrive as they commit.")
    var live = true

    func run() async throws {
        if let command = tokenCommand ?? ProcessInfo.processInfo.environment["FERRY_NOTES_TOKEN_COMMAND"], !command.isEmpty {
            return try await runSignedIn(with: TokenCommand(command: command))
        }
        let credentials = try Credentials.resolve(server: server, user: user, password: password)
        let transport = OfflineTransport(URLSessionTransport(baseURL: credentials.server))
        // Tokens expire; the session signs in again with what the person gave
        // when the server refuses its token (the password stays in memory only).
        let session = FerryAuth.PasswordSession(transport: transport, name: credentials.user, password: credentials.password)
        let userID = try await session.signIn()
        try await run(transport: transport, tokens: session, account: (credentials.user, userID, credentials.server))
    }

    /// Signed in with an identity provider's JWT: the user is whoever the server says it names.
    func runSignedIn(with command: TokenCommand) async throws {
        guard let serverText = server ?? ProcessInfo.processInfo.environment["FERRY_NOTES_SERVER"],
            let url = URL(string: serverText), url.scheme != nil
        else {
            throw Credentials.Missing(description: "no server URL: --server or FERRY_NOTES_SERVER")
        }
        let transport = OfflineTransport(URLSessionTransport(baseURL: url))
        let token = try command.token()
        let me = try await transport.send(TransportRequest(method: "GET", path: "/v1/auth/me", headers: ["Authorization": "Bearer \(token)"]))
        guard me.status == 200, let userID = me.object?["id"]?.string else {
            let code = me.object?["code"]?.string ?? "status \(me.status)"
            throw Credentials.Missing(description: "the server refused the token command's token (\(code))")
        }
        // The engine asks for a token when it starts and again (refresh) when the server
        // refuses the one it holds: the command runs each time, as a provider's SDK refreshes.
        let tokens = TokenClosure { _ in AccessToken(try command.token()) }
        try await run(transport: transport, tokens: tokens, account: ("jwt:" + userID.prefix(8), userID, url))
    }

    /// The app itself, once signed in.
    func run(transport: OfflineTransport, tokens: some TokenProvider, account: (user: String, userID: String, server: URL)) async throws {
        let userID = account.userID
        let directory = URL(fileURLWithPath: dataDirectory ?? Self.defaultDirectory())
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // One file per (server, user): two accounts never share rows or an outbox.
        let path = directory.appendingPathComponent(FerryStore.fileName(server: account.server, userID: userID)).path
        let store = try FerryStore(path: path)
        let engine = SyncEngine(store: store, transport: transport, tokens: tokens)
        let app = NotesApp(
            store: store, engine: engine, transport: transport,
            account: .init(user: account.user, userID: userID, server: account.server, storePath: path),
            terminal: isatty(1) == 1, live: live)

        let listeners = [
            Task { for await event in engine.events { await app.record(event) } },
            Task { for await _ in engine.status { await app.statusChanged() } },
        ]
        if live { await engine.start(uploadDelay: NotesApp.uploadDelay) }
        await app.syncNow()
        await app.draw()
        for await line in LineReader.lines() {
            if await app.handle(line) == .quit { break }
        }
        await engine.stop()
        listeners.forEach { $0.cancel() }
        FileHandle.standardOutput.write(Data(("\n" + (try await app.farewell())).utf8))
    }

    static func defaultDirectory() -> String {
        let environment = ProcessInfo.processInfo.environment
        if let directory = environment["FERRY_NOTES_DIR"], !directory.isEmpty { return directory }
        let base =
            environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share").path
        return base + "/ferry-notes"
    }
}
