@testable import Ferry
import FerryHTTPTestSupport
import FerryPostgres
import FerryTestSupport
import Foundation
import Logging
import Synchronization
import Testing

/// The outbox that carries this instance's hints to the others (issue 47,
/// item 4): at most one NOTIFY transaction per ``HintOutbox/sendInterval``,
/// however many writes commit meanwhile, and every hint still arrives.
@Suite struct HintOutboxTests {
    /// A scratch database, a connection listening on its hints' channel, and
    /// an outbox to it (not started), on a registry of its own.
    struct Listened {
        let database: ScratchDatabase
        let listener: PostgresConnection
        let registry = WaiterRegistry(limits: .init(perInstance: 10, perUser: 10))
        let outbox: HintOutbox

        init() throws {
            database = try ScratchDatabase()
            do {
                listener = try database.connect()
                try listener.listen(["ferry_changes"])
            } catch {
                database.drop()
                throw error
            }
            outbox = HintOutbox(url: database.url, registry: registry, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        }

        func close() {
            listener.close()
            database.drop()
        }
    }

    /// A lone instance sends nothing, and never drops a hint on an answer older than the
    /// hint: published after a check that found no other listener, it waits for the next
    /// check, which sends it when another instance has begun to listen meanwhile.
    @Test func aLoneInstanceDropsOnlyWhatACheckAfterItVouchesFor() throws {
        let database = try ScratchDatabase()
        defer { database.drop() }
        // This instance's own listener (the outbox knows its backend), named as Ferry names it.
        let own = try database.connect(applicationName: ChangeListener.applicationName)
        defer { own.close() }
        let registry = WaiterRegistry(limits: .init(perInstance: 10, perUser: 10))
        let outbox = HintOutbox(
            url: database.url, registry: registry, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }),
            peerCheckInterval: 5)
        outbox.listenerBackend.store(own.backendPID, ordering: .releasing)
        outbox.start()
        defer { outbox.stop() }
        // Alone: the first hint is dropped at the first check.
        outbox.publish([], collected: "1 1 u first")
        try waitUntil("the first check", within: 30) { outbox.unsentAlone.load(ordering: .relaxed) == 1 }
        #expect(outbox.peers.load(ordering: .relaxed) == 0)
        #expect(outbox.notifies.load(ordering: .relaxed) == 0)
        // A hint published after that check, and then another instance's listener: the
        // check that found none cannot vouch for the hint, so the next one sends it. (Were
        // this thread slower than the interval, the next check could come before the
        // other listener; then the case did not happen, and the test says so.)
        // It connects and listens first under another name, so that it becomes an
        // instance's listener in one statement.
        let other = try database.connect(applicationName: "not-yet-ferry")
        defer { other.close() }
        try other.listen(["ferry_changes"])
        let checks = outbox.peerChecks.load(ordering: .relaxed)
        outbox.publish([], collected: "2 1 u second")
        _ = try other.query("SET application_name = '\(ChangeListener.applicationName)'")
        try #require(outbox.peerChecks.load(ordering: .relaxed) == checks, "the next check came before the other listener")
        var received: [String] = []
        try waitUntil("the second hint at the other listener", within: 30) {
            received += try other.notifications(waitingUpTo: 0.2).filter { $0.channel == "ferry_changes" }.map(\.payload)
            return !received.isEmpty
        }
        #expect(received == ["@\(outbox.instance)\n2 1 u second"])
        #expect(outbox.peers.load(ordering: .relaxed) == 1)
        #expect(outbox.unsentAlone.load(ordering: .relaxed) == 1)
    }

    /// The sender's connection closed between two sends, as a PostgreSQL restart closes
    /// it: the next send opens a new one without a warning, which would tell an operator
    /// that the other instances learn of writes late when nothing was late.
    @Test func aConnectionClosedBetweenSendsIsReplacedWithoutAWarning() throws {
        let f = try Listened()
        defer { f.close() }
        let events = RecordingLogHandler.Events()
        let outbox = HintOutbox(
            url: f.database.url, registry: f.registry, logger: Logger(label: "test") { _ in RecordingLogHandler(events: events) },
            peerCheckInterval: 0)
        outbox.start()
        defer { outbox.stop() }
        outbox.publish([], collected: "1 1 u first")
        try waitUntil("the first send", within: 30) { outbox.notifies.load(ordering: .relaxed) == 1 }
        let owner = try f.database.connect()
        defer { owner.close() }
        let ended = try owner.query(
            "SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'ferry-hints'"
        )
        #expect(ended.first?["n"] == "1")
        // pg_terminate_backend only signals: the backend is gone once it has left pg_stat_activity.
        try waitUntil("the sender's backend to end", within: 30) {
            try owner.query(
                "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'ferry-hints'"
            ).first?["n"] == "0"
        }
        outbox.publish([], collected: "2 1 u second")
        try waitUntil("the second send", within: 30) { outbox.notifies.load(ordering: .relaxed) == 2 }
        #expect(events.messages.isEmpty, "\(events.messages)")
    }

    @Test func busyWritersShareOneNotifyPerIntervalAndEveryHintArrives() throws {
        let f = try Listened()
        defer { f.close() }
        let (listener, registry, outbox) = (f.listener, f.registry, f.outbox)
        outbox.start()
        // A write's commit every half millisecond, as eight busy writers make them.
        let writes = 200
        let started = Date()
        for write in 0..<writes {
            // Half of them made by Ferry of its rows, half collected by triggers (the text form).
            let hint = ChangeHint(xid: UInt64(write + 1), table: 1, target: .user("writer-\(write)"))
            if write % 2 == 0 { outbox.publish([hint]) } else { outbox.publish([], collected: hint.line) }
            Thread.sleep(forTimeInterval: 0.0005)
        }
        // This instance's waiters hear of every write without waiting for a NOTIFY.
        try waitUntil("the hints delivered here", within: 30) { registry.hintCount.load(ordering: .relaxed) == writes }
        outbox.stop()
        let elapsed = Date().timeIntervalSince(started)
        var received: Set<String> = []
        try waitUntil("every hint at the listener", within: 30) {
            for notification in try listener.notifications(waitingUpTo: 0.2) where notification.channel == "ferry_changes" {
                #expect(notification.payload.hasPrefix("@\(outbox.instance)\n"))
                received.formUnion(notification.payload.split(separator: "\n").dropFirst().map(String.init))
            }
            return received.count == writes
        }
        #expect(received == Set((0..<writes).map { "\($0 + 1) 1 u writer-\($0)" }))
        let notifies = outbox.notifies.load(ordering: .relaxed)
        // One NOTIFY per interval at most (and one more for the stop's flush); with none, a sender
        // as fast as its round trip sent about one per write.
        #expect(notifies >= 1)
        #expect(notifies <= Int(elapsed / HintOutbox.sendInterval) + 2, "\(notifies) NOTIFYs in \(elapsed) s")
        // Nor does each commit wake the sender's thread (stop 16): it wakes once an interval, and
        // at its start after an idle spell. Waking it on every publish cost a thread hand-off a PATCH.
        let rounds = outbox.rounds.load(ordering: .relaxed)
        #expect(rounds <= 2 * Int(elapsed / HintOutbox.sendInterval) + 4, "\(rounds) wakes of the sender in \(elapsed) s")
    }

    /// The writer wakes its instance's waiters itself, right after its commit (no hand-off to
    /// the sender's thread), up to ``HintOutbox/writerWakes`` of them; the sender's thread wakes
    /// a fan-out's rest, so that the writer's answer does not wait for it.
    @Test func aWriterWakesAFewWaitersItselfAndTheSenderTheRestOfAFanOut() throws {
        let database = try ScratchDatabase()
        defer { database.drop() }
        let registry = WaiterRegistry(limits: .init(perInstance: 100, perUser: 100))
        registry.setTables([101: "terms"], scopeTables: [])
        // Waiters whose caller is not known yet: every hint concerns them.
        let tickets = (0..<(HintOutbox.writerWakes + 24)).map { _ in WaiterRegistryTests.Ticket() }
        for ticket in tickets { #expect(registry.register(ticket, user: nil, resources: nil) == nil) }
        let outbox = HintOutbox(url: database.url, registry: registry, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        // Not started: whatever is woken now was woken by publish, on this thread.
        outbox.publish([ChangeHint(xid: 7, table: 101, target: .user("alice"))])
        #expect(tickets.filter { $0.woken == 1 }.count == HintOutbox.writerWakes)
        #expect(registry.hintCount.load(ordering: .relaxed) == 1)
        outbox.start()
        defer { outbox.stop() }
        try waitUntil("the fan-out's rest woken by the sender", within: 30) { tickets.allSatisfy { $0.woken == 1 } }
    }

    /// Hints past one payload go in several, all in one NOTIFY transaction, and every one arrives.
    @Test func hintsPastOnePayloadGoInSeveralOfOneNotify() throws {
        let f = try Listened()
        defer { f.close() }
        let (listener, outbox) = (f.listener, f.outbox)
        let hints = (1...600).map { "\($0) 1 u writer-with-a-rather-long-name-\($0)" }
        // Published before the thread starts, so that one send carries them all.
        outbox.publish([], collected: hints.joined(separator: "\n"))
        outbox.start()
        var received: [String] = []
        var payloads = 0
        try waitUntil("every hint at the listener", within: 30) {
            for notification in try listener.notifications(waitingUpTo: 0.2) where notification.channel == "ferry_changes" {
                payloads += 1
                #expect(notification.payload.hasPrefix("@\(outbox.instance)\n"))
                #expect(notification.payload.utf8.count <= HintOutbox.payloadLimit)
                received += notification.payload.split(separator: "\n").dropFirst().map(String.init)
            }
            return received.count >= hints.count
        }
        outbox.stop()
        #expect(received == hints)
        #expect(payloads > 1)
        #expect(outbox.notifies.load(ordering: .relaxed) == 1)
    }

    /// The outbox's payloads stay under PostgreSQL's 8000 bytes, each named by its instance, every line kept once.
    @Test func theOutboxSplitsItsHintsIntoPayloadsThatFit() {
        let lines = (0..<500).map { "\($0) 16390 s 16384 " + String(repeating: "k", count: 40) + "\($0)" }
        let payloads = HintOutbox.payloads(lines.joined(separator: "\n") + "\n", instance: "me")
        #expect(payloads.count > 1)
        #expect(payloads.allSatisfy { $0.utf8.count <= HintOutbox.payloadLimit && $0.hasPrefix("@me\n") })
        #expect(payloads.flatMap { $0.split(separator: "\n").dropFirst().map(String.init) } == lines)
        #expect(HintOutbox.payloads("", instance: "me").isEmpty)
    }
}
