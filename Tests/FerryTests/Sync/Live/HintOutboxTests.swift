@testable import Ferry
import FerryHTTPTestSupport
import FerryPostgres
import FerryTestSupport
import Foundation
import Logging
import Testing

/// The outbox that carries this instance's hints to the others (issue 47,
/// item 4): at most one NOTIFY transaction per ``HintOutbox/sendInterval``,
/// however many writes commit meanwhile, and every hint still arrives.
@Suite struct HintOutboxTests {
    @Test func busyWritersShareOneNotifyPerIntervalAndEveryHintArrives() throws {
        let database = try ScratchDatabase()
        defer { database.drop() }
        let listener = try database.connect()
        defer { listener.close() }
        try listener.listen(["ferry_changes"])
        let registry = WaiterRegistry(limits: .init(perInstance: 10, perUser: 10))
        let outbox = HintOutbox(url: database.url, registry: registry, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        outbox.start()
        // A write's commit every half millisecond, as eight busy writers make them.
        let writes = 200
        let started = Date()
        for write in 0..<writes {
            outbox.publish("\(write + 1) 1 u writer-\(write)")
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
    }
}
