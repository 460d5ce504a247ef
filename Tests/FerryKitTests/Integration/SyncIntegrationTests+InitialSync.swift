@testable import FerryKit
import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// A transport that runs `hook` once, before the first request `match` accepts
/// is sent: for a write that lands on the server in the middle of a download.
final class HookTransport: Transport {
    let inner: any Transport
    let match: @Sendable (TransportRequest) -> Bool
    let hook: @Sendable () async throws -> Void
    private let fired = Mutex(false)

    init(
        _ inner: any Transport, when match: @escaping @Sendable (TransportRequest) -> Bool,
        hook: @escaping @Sendable () async throws -> Void
    ) {
        (self.inner, self.match, self.hook) = (inner, match, hook)
    }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        let first =
            match(request)
            && fired.withLock { fired in
                defer { fired = true }
                return !fired
            }
        if first { try await hook() }
        return try await inner.send(request)
    }
}

extension SyncIntegrationTests {
    /// One set with `count` terms, uploaded by `device`.
    static func set(_ title: String, terms count: Int, on device: Device) throws -> (set: String, terms: [String]) {
        let set = try device.store.create("study_sets", ["title": .string(title)])
        var terms: [String] = []
        for n in 0..<count {
            terms.append(
                try device.store.create(
                    "terms",
                    [
                        "set_id": .string(set), "word": .string("\(title) \(n)"),
                        "rank": .string(try device.store.rankAtEnd("terms", scope: .string(set))),
                    ]))
        }
        return (set, terms)
    }

    static func count(_ store: FerryStore, _ resource: String) throws -> Int {
        try store.database.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM \(resource)") ?? -1 }
    }

    @Test func initialSyncReadsIndexPagesInTheAppsOrderThenTheFeedBringsWhatChangedMeanwhile() async throws {
        let (server, alice, a, _) = try await Self.twoDevices()
        defer { server.stop() }
        let x = try Self.set("x", terms: 7, on: a), open = try Self.set("open", terms: 5, on: a)
        try await a.engine.sync()
        #expect(try a.store.pendingCount() == 0)

        // While the new device reads the second page of all terms, another device
        // edits a term the first page already brought and adds one the snapshot
        // does not hold: both must arrive through the feed afterwards.
        let added = Mutex<String?>(nil)
        let hook = HookTransport(
            URLSessionTransport(baseURL: server.baseURL),
            when: { request in
                request.path.hasPrefix("/v1/terms?limit=3&order=id&public=false&paging_token=") && request.path.hasSuffix("page=2")
            },
            hook: {
                try a.store.update("terms", id: x.terms[0], ["word": .string("edited meanwhile")])
                let id = try a.store.create(
                    "terms",
                    [
                        "set_id": .string(x.set), "word": .string("added meanwhile"),
                        "rank": .string(try a.store.rankAtEnd("terms", scope: .string(x.set))),
                    ])
                added.withLock { $0 = id }
                try await a.engine.sync()
            })
        let c = try Device(
            server: server, token: alice.token, inner: hook,
            initialSyncOrder: [
                .rows(of: "study_sets", where: "id", equals: open.set),
                .rows(of: "terms", where: "set_id", equals: open.set),
            ], pageSize: 3)
        try await c.engine.sync()

        let paths = c.transport.delivered.map(\.path).filter { $0 != "/v1" }
        #expect(paths.first == "/v1/changes?since=now")
        #expect(paths.dropFirst().first == "/v1/study_sets?limit=3&order=id&public=false&id=\(open.set)", "the app's first step comes first")
        let openTerms = paths.indices.filter { paths[$0].hasPrefix("/v1/terms?limit=3&order=id&public=false&set_id=\(open.set)") }
        #expect(openTerms.count == 2, "5 terms in pages of 3")
        let allTerms = paths.indices.filter {
            paths[$0] == "/v1/terms?limit=3&order=id&public=false" || paths[$0].hasPrefix("/v1/terms?limit=3&order=id&public=false&paging_token=")
        }
        #expect(allTerms.count == 4, "12 terms in pages of 3, following paging.next")
        let allSets = paths.indices.filter { paths[$0] == "/v1/study_sets?limit=3&order=id&public=false" }
        #expect(allSets.count == 1)
        if let lastOpen = openTerms.last, let firstAll = allTerms.first, let sets = allSets.first {
            #expect(lastOpen < sets && sets < firstAll, "the app's steps, then parents before children")
        }
        #expect(try c.store.initialSyncState() == .init(), "no progress record left once the feed took over")
        #expect(try c.store.cursor() != nil)

        let addedID = try #require(added.withLock { $0 })
        // Wait for both: the edit and the add are two uploads, two transactions, in
        // either order, and the feed serves each only once the cluster's oldest
        // running transaction (any test's, in any database) is past it. So one can
        // arrive a poll before the other; in one loaded CI run the add came first.
        // An edit that never arrives still fails here, by the timeout.
        try await c.sync {
            try c.store.row("terms", id: addedID) != nil
                && c.store.row("terms", id: x.terms[0])?["word"] == .string("edited meanwhile")
        }
        #expect(try Self.count(c.store, "terms") == 13)
        #expect(try Self.count(c.store, "study_sets") == 2)
        #expect(try c.store.pendingCount() == 0)
    }

    @Test func anInitialSyncCutOffMidwayResumesAtTheNextPageAfterAReopenAndLosesNothing() async throws {
        let (server, alice, a, _) = try await Self.twoDevices()
        defer { server.stop() }
        let made = try Self.set("s", terms: 10, on: a)
        try await a.engine.sync()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ferrykit-initial-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: file) }

        do {
            let c = try Device(server: server, token: alice.token, path: file, pageSize: 3)
            c.transport.inject(.dropResponse) {
                $0.path.hasPrefix("/v1/terms?limit=3&order=id&public=false&paging_token=") && $0.path.hasSuffix("page=3")
            }
            // A loaded server may say 503 (Retry-After) first; the app would try again.
            await #expect(throws: TransportFailure.self) {
                while true {
                    do { try await c.engine.sync() } catch is ServerRefusedForNow { continue }
                }
            }
            #expect(try Self.count(c.store, "terms") == 6, "two pages applied before the cut")
            #expect(try c.store.initialSyncState().next?.hasSuffix("page=3") == true)
            #expect(try c.store.cursor() == nil, "the feed does not start before every step is done")
        }
        // The process dies here; the app opens the same file again.
        let reopened = try Device(server: server, token: alice.token, path: file, pageSize: 3)
        while true {
            do { try await reopened.engine.sync(); break } catch is ServerRefusedForNow { continue }
        }
        let paths = reopened.transport.delivered.map(\.path)
        #expect(!paths.contains("/v1/changes?since=now"), "the cursor taken before the first page is kept")
        #expect(!paths.contains("/v1/terms?limit=3&order=id&public=false"), "terms resume at page 3, not page 1")
        #expect(paths.contains { $0.hasPrefix("/v1/terms?limit=3&order=id&public=false&paging_token=") && $0.hasSuffix("page=3") })
        #expect(try Self.count(reopened.store, "terms") == 10)
        #expect(Set(try reopened.store.rows("terms").compactMap { $0["id"]?.string }) == Set(made.terms))
        #expect(try reopened.store.initialSyncState() == .init())
    }

    @Test func anExpiredSnapshotRestartsItsStepAndProgressIsReported() async throws {
        let (server, alice, a, _) = try await Self.twoDevices()
        defer { server.stop() }
        _ = try Self.set("s", terms: 8, on: a)
        try await a.engine.sync()
        let c = try Device(server: server, token: alice.token, pageSize: 3)
        let expired = TransportResponse(
            status: 410, headers: ["Content-Type": "application/problem+json"],
            body: Data(#"{"code":"paging_token_expired","status":410}"#.utf8))
        c.transport.inject(.answer(expired)) {
            $0.path.hasPrefix("/v1/terms?limit=3&order=id&public=false&paging_token=") && $0.path.hasSuffix("page=2")
        }
        var statuses: [SyncStatus] = []
        // Until the round that finished the initial sync is idle (its cursor saved): a
        // loaded server may say 503 (Retry-After) first, and that round ends idle too.
        let watcher = Task { [status = c.engine.status, store = c.store] in
            var seen: [SyncStatus] = []
            for await s in status {
                seen.append(s)
                if s.phase == .idle, s.online, (try? store.cursor()) != nil { break }
            }
            return seen
        }
        while true {
            do { try await c.engine.sync(); break } catch is ServerRefusedForNow { continue }
        }
        statuses = await watcher.value
        let paths = c.transport.delivered.map(\.path)
        #expect(paths.filter { $0 == "/v1/terms?limit=3&order=id&public=false" }.count == 2, "page 1 again, for a new snapshot")
        #expect(try Self.count(c.store, "terms") == 8)
        let progress = statuses.compactMap(\.initialSync).filter { $0.step == .resource("terms") }
        #expect(progress.last?.received == 8 && progress.last?.total == 8, "\(progress)")
        let resources = try #require(try c.store.schema()).resources.count
        #expect(
            progress.allSatisfy { $0.steps == resources && $0.stepsDone == resources - 1 },
            "every resource one step, none chosen by the app, terms (the deepest) last: \(progress)")
        #expect(statuses.last?.initialSync == nil)
    }
}
