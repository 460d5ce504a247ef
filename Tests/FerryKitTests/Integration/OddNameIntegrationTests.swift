@testable import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// A table and a column a team named with a space and a letter past ASCII
/// (`app."Odd Things"`, `"Due Date"`, `"Café"`), synced both ways by FerryKit
/// against a real `ferry serve`. The server has served such names since its
/// paths are decoded, but FerryKit sent an upload's path raw (`/v1/Odd Things`,
/// which iOS 16's `URL(string:)` refuses: every upload failed with `badURL`; the
/// Foundation here encodes it itself, so the test checks the path sent), and
/// GET /v1 gave its `path` raw.
@Suite struct OddNameIntegrationTests {
    static let app = [
        "0001_odd_things.sql": """
        CREATE SCHEMA app;
        CREATE TABLE app."Odd Things" (id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
                                       owner_id uuid NOT NULL DEFAULT ferry.current_user_id() REFERENCES ferry.users,
                                       "Due Date" text, "Café" text);
        SELECT ferry.sync_owned('app."Odd Things"', owner => 'owner_id');
        """
    ]

    @Test func aTableNamedWithASpaceSyncsBothWays() async throws {
        let database = try ScratchDatabase(prefix: "ferrykit_odd", migrate: false)
        let server: FerryServer
        do {
            try database.applyMigrations(appFiles: Self.app)
            server = try FerryServer(database: database)
        } catch {
            database.drop()
            throw error
        }
        defer { server.stop() }
        let alice = try await server.user("alice")
        let a = try Device(server: server, token: alice.token), b = try Device(server: server, token: alice.token)
        try await a.engine.sync()
        try await b.engine.sync()

        let listing = try await a.transport.inner.send(
            TransportRequest(method: "GET", path: "/v1", headers: ["Authorization": "Bearer \(alice.token)"]))
        let resources = listing.object?["resources"]?.array?.compactMap(\.object) ?? []
        #expect(resources.first?["path"]?.string == "/v1/Odd%20Things", "\(String(decoding: listing.body, as: UTF8.self).prefix(300))")

        let id = try a.store.create("Odd Things", ["Due Date": .string("Friday"), "Café": .string("noir")])
        try await a.engine.sync()
        #expect(try a.store.pendingCount() == 0, "the create was uploaded")
        #expect(a.transport.delivered.contains { $0.method == "POST" && $0.path == "/v1/Odd%20Things" })
        try await b.sync { try b.store.rows("Odd Things").first?["Due Date"]?.string == "Friday" }
        #expect(try b.store.rows("Odd Things").first?["Café"]?.string == "noir")

        try b.store.update("Odd Things", id: id, ["Due Date": .string("Monday")])
        try await b.engine.sync()
        #expect(try b.store.pendingCount() == 0, "the update was uploaded")
        #expect(b.transport.delivered.contains { $0.method == "PATCH" && $0.path == "/v1/Odd%20Things/\(id)" })
        try await a.sync { try a.store.rows("Odd Things").first?["Due Date"]?.string == "Monday" }

        try a.store.delete("Odd Things", id: id)
        try await a.engine.sync()
        #expect(try a.store.pendingCount() == 0, "the delete was uploaded")
        try await b.sync { try b.store.rows("Odd Things").isEmpty }
    }
}
