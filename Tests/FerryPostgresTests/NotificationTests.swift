import FerryTestSupport
import Foundation
import Glibc
import Testing
@testable import FerryPostgres

/// LISTEN/NOTIFY on one connection: what a committed NOTIFY delivers, what a
/// rolled-back one does not, the caller's descriptor cutting a wait short,
/// and a session killed under a listener.
@Suite struct NotificationTests {
    /// A channel of this test's own, so that tests running at once do not hear each other.
    static func channel() -> String { "ferry_test_\(UInt32.random(in: 0...UInt32.max))" }

    @Test func aCommittedNotifyArrivesWithItsPayload() throws {
        let channel = Self.channel()
        let listener = try ownerConnection()
        try listener.listen([channel])
        let sender = try ownerConnection()
        _ = try sender.query("SELECT pg_notify($1, 'one'), pg_notify($1, 'two')", [channel])
        var received: [PostgresNotification] = []
        let deadline = Date().addingTimeInterval(5)
        while received.count < 2, Date() < deadline {
            received += try listener.notifications(waitingUpTo: 1)
        }
        #expect(received.map(\.payload) == ["one", "two"])
        #expect(received.allSatisfy { $0.channel == channel && $0.senderPID == sender.backendPID })
    }

    @Test func aRolledBackNotifyNeverArrives() throws {
        let channel = Self.channel()
        let listener = try ownerConnection()
        try listener.listen([channel])
        let sender = try ownerConnection()
        try sender.execute("BEGIN; SELECT pg_notify('\(channel)', 'lost'); ROLLBACK")
        _ = try sender.query("SELECT pg_notify($1, 'kept')", [channel])
        let received = try listener.notifications(waitingUpTo: 5)
        #expect(received.map(\.payload) == ["kept"])
    }

    @Test func theWakeDescriptorCutsTheWaitShort() throws {
        let listener = try ownerConnection()
        try listener.listen([Self.channel()])
        var pipeEnds: [Int32] = [0, 0]
        #expect(pipe(&pipeEnds) == 0)
        defer { close(pipeEnds[0]); close(pipeEnds[1]) }
        var byte: UInt8 = 1
        #expect(write(pipeEnds[1], &byte, 1) == 1)
        let started = Date()
        #expect(try listener.notifications(waitingUpTo: 30, wakeDescriptor: pipeEnds[0]).isEmpty)
        #expect(Date().timeIntervalSince(started) < 10)
    }

    @Test func aKilledListenerThrowsAConnectionError() throws {
        let listener = try ownerConnection()
        try listener.listen([Self.channel()])
        let killer = try ownerConnection()
        _ = try killer.query("SELECT pg_terminate_backend($1)", [String(listener.backendPID)])
        let error = postgresError {
            for _ in 0..<10 { _ = try listener.notifications(waitingUpTo: 1) }
        }
        #expect(error?.kind == .connection)
        #expect(listener.isBroken)
    }

    @Test func channelNamesAreQuoted() throws {
        let listener = try ownerConnection()
        let channel = "odd \"name\"; DROP"
        try listener.listen([channel])
        let sender = try ownerConnection()
        _ = try sender.query("SELECT pg_notify($1, 'x')", [channel])
        #expect(try listener.notifications(waitingUpTo: 5).map(\.channel) == [channel])
    }
}
