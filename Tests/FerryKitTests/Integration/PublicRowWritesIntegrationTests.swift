import FerryHTTPTestSupport
@testable import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// A subscriber's writes to a public set it may read and not write (issue
/// 46): each is refused, and the set stays on the device as the server has it.
@Suite(.serialized) struct PublicRowWritesIntegrationTests {
    typealias Phone = SubscriptionIntegrationTests.Phone

    @Test func aSubscribersDeleteOfAPublicSetIsRefusedAndTheSetStays() async throws {
        let w = try await SubscriptionIntegrationTests.world(terms: 2)
        defer { w.server.stop() }
        let (server, bob, open) = (w.server, w.bob, w.open)

        let phone = try Phone(server, token: bob.token)
        try await phone.engine.sync()
        try await phone.engine.subscribe(stream: "set", id: open)
        try await phone.sync { try phone.terms(of: open) == 2 }

        // Bob deletes Alice's public set on his phone: the server refuses it.
        try phone.store.delete("sets", id: open)
        try await phone.engine.sync()
        #expect(try phone.store.pendingCount() == 0)
        let response = try await URLSessionTransport(baseURL: server.baseURL).send(
            TransportRequest(method: "GET", path: "/v1/sets/\(open)", headers: ["Authorization": "Bearer \(bob.token)"]))
        #expect(response.status == 200)
        // The set is still Alice's and public, and Bob is still subscribed: his phone holds it
        // (before the fix, the 404 counted as "deleted already", and the set was gone for good).
        #expect(try phone.store.row("sets", id: open)?["title"] == .string("set"))
        #expect(try phone.terms(of: open) == 2)
        var refused = false
        while !refused, let event = await SyncIntegrationTests.nextEvent(phone.engine, within: 30) {
            if case .rejected("sets", open, 404, _) = event { refused = true }
        }
        #expect(refused)
    }

    @Test func aSubscribersEditOfAPublicSetIsRefusedAndRolledBack() async throws {
        let w = try await SubscriptionIntegrationTests.world(terms: 1)
        defer { w.server.stop() }
        let (server, bob, open) = (w.server, w.bob, w.open)

        let phone = try Phone(server, token: bob.token)
        try await phone.engine.subscribe(stream: "set", id: open)
        try await phone.sync { try phone.terms(of: open) == 1 }
        try phone.store.update("sets", id: open, ["title": .string("mine now")])
        try await phone.engine.sync()
        #expect(try phone.store.row("sets", id: open)?["title"] == .string("set"))
    }
}
