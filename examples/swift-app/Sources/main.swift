// A small app on FerryKit, built from outside Ferry's repository with only
// FerryKit's public API and the study example's generated models: it signs
// in, syncs, writes with records and with GRDB, observes, syncs again, and
// checks that a second device of the same user ends with the same rows, the
// set subscribed to first (the study example's stream `set`).
//
//   FERRY_SERVER=http://127.0.0.1:8080 FERRY_USER=demo FERRY_PASSWORD=demo-password swift run
import FerryKit
import Foundation
import GRDB
import StudyModels

let environment = ProcessInfo.processInfo.environment
guard let server = environment["FERRY_SERVER"].flatMap(URL.init(string:)), let name = environment["FERRY_USER"],
    let password = environment["FERRY_PASSWORD"]
else {
    FileHandle.standardError.write(Data("usage: FERRY_SERVER=http://host:port FERRY_USER=name FERRY_PASSWORD=... swift-app\n".utf8))
    exit(2)
}

struct Failure: Error, CustomStringConvertible {
    let description: String
}

func check(_ condition: Bool, _ what: String) throws {
    if !condition { throw Failure(description: what) }
}

/// One device: its own store file and engine, signed in as the same user.
func device(_ file: String, in directory: URL) async throws -> (FerryStore, SyncEngine) {
    let transport = URLSessionTransport(baseURL: server)
    let session = FerryAuth.PasswordSession(transport: transport, name: name, password: password)
    let userID = try await session.signIn()
    let path = directory.appendingPathComponent(file + "-" + FerryStore.fileName(server: server, userID: userID)).path
    let store = try FerryStore(path: path)
    return (store, SyncEngine(store: store, transport: transport, tokens: session))
}

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("swift-app-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }

do {
    let (store, engine) = try await device("phone", in: directory)
    try await engine.sync()

    // Offline writes: records through the store, and one with GRDB itself.
    let set = try store.insert(StudySet(title: "Spanish"))
    let hola = try store.insert(Term(setID: set.id, word: "hola", definition: "hello"))
    let adios = try store.insert(Term(setID: set.id, word: "adios", definition: "goodbye"))
    try store.move(adios, after: nil)
    try store.update(hola) { $0.definition = "hello, hi" }
    try store.database.write { db in
        var stored = try StudySet.fetchOne(db, key: set.id)
        stored?.description = "greetings"
        try stored?.update(db)
    }
    var terms = store.observe(Term.self, where: Term.Columns.setID == set.id).makeAsyncIterator()
    let seen = try await terms.next() ?? []
    try check(seen.map(\.word) == ["adios", "hola"], "observed \(seen.map(\.word)), not adios then hola")
    try check(try store.pendingCount() >= 4, "the writes wait in the outbox")

    try await engine.sync()
    try check(try store.pendingCount() == 0, "the outbox is empty after the sync")
    try check(try store.state(of: set) == .synced, "the set is synced")

    // A second device of the same user fills from the server, the set it
    // opened first: a subscription heads the download queue.
    let (other, otherEngine) = try await device("tablet", in: directory)
    // The study example's stream `set` (examples/study/migrations/0018_set_stream.sql), by type:
    // `ferry generate swift` made StudySet its FerryStreamRoot (StudySet.stream == "set").
    let opened = try await otherEngine.subscribe(StudySet.self, id: set.id, ttl: .zero, priority: .high)
    try check(try opened.state() == .queued, "a subscription waits for the next sync")
    var copy: [Term] = []
    for _ in 0..<60 {
        try await otherEngine.sync()
        copy = try other.fetch(Term.self, where: Term.Columns.setID == set.id)
        if copy.count == 2 { break }
        try await Task.sleep(for: .milliseconds(250))
    }
    try check(
        copy.map(\.word) == ["adios", "hola"] && copy.last?.definition == "hello, hi",
        "the second device holds \(copy.map { "\($0.word ?? "") = \($0.definition ?? "")" })")
    try check(try other.fetch(StudySet.self, id: set.id)?.description == "greetings", "the GRDB write reached the second device")
    try check(try opened.state() == .synced, "the subscription is synced, not \(try opened.state())")

    // Unsubscribed (TTL zero): its rows leave with the next sync, except those
    // the default stream holds too, which here is all of them (the user's own set).
    try await otherEngine.unsubscribe(opened)
    try await otherEngine.sync()
    try check(try opened.state() == .none, "the subscription is gone")
    try check(try other.fetch(Term.self, where: Term.Columns.setID == set.id).count == 2, "the default stream's rows stay")
    print(
        "swift-app: ok: a set and 2 terms written offline (records, a move, a GRDB update) synced to a second device in order,"
            + " subscribed to first and unsubscribed")
} catch {
    FileHandle.standardError.write(Data("swift-app: failed: \(error)\n".utf8))
    exit(1)
}
