@testable import FerryKit
import FerryTestSupport
import Foundation
import Testing

extension SyncIntegrationTests {
    /// The steady state: a sync with nothing to upload or download is one
    /// conditional request answered 304 with no body.
    @Test func aSyncWithNothingToDoIsOne304() async throws {
        let (server, _, a, b) = try await Self.twoDevices()
        defer { server.stop() }
        let id = try a.store.create("study_sets", ["title": .string("s")])
        try await a.engine.sync()
        // Until the feed has passed the device's own write (it waits for the
        // cluster's other transactions), a sync may still download it: wait
        // until another device of the user has it from the feed, then until a's
        // own syncs are quiet.
        try await b.sync { try b.store.row("study_sets", id: id) != nil }
        var before = a.transport.delivered.count
        try await a.sync {
            let quiet = a.transport.answers[before...].map(\.status) == [304]
            before = a.transport.delivered.count
            return quiet
        }
        try await a.engine.sync()
        let requests = a.transport.delivered[before...], answers = a.transport.answers[before...]
        #expect(requests.count == 1, "\(requests.map { "\($0.method) \($0.path)" })")
        #expect(requests.first?.headers["If-None-Match"] != nil)
        #expect(answers.first?.status == 304)
        #expect(answers.first?.body.isEmpty == true)
        print("ferrykit: steady-state sync: \(requests.count) request, \(answers.first?.status ?? 0), \(answers.first?.body.count ?? -1) body bytes")
    }
}
