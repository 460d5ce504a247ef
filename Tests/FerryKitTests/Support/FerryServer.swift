import FerryHTTPTestSupport
import FerryKit
import FerryPostgres
import FerryTestSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A real `ferry serve` process on a fresh migrated database, for FerryKit's
/// integration tests: the built binary, real PostgreSQL and memcached, real sockets.
final class FerryServer {
    let database: ScratchDatabase
    let serve: FerryServeProcess
    /// Whether ``stop()`` drops the database: not for a second server on another's (``init(beside:settings:)``).
    private let ownsDatabase: Bool
    var port: Int { serve.port }
    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Serves `database` (a new one migrated to the study example by default); `settings`
    /// adds FERRY_* variables (a JWT provider, say) to the server's environment.
    init(database: ScratchDatabase? = nil, settings: [String: String] = [:]) throws {
        let database = try database ?? ScratchDatabase()
        self.database = database
        ownsDatabase = true
        do {
            serve = try Self.serve(database, settings)
        } catch {
            database.drop()
            throw error
        }
    }

    /// A second `ferry serve` on `other`'s database, with `settings` of its own
    /// (the simulation's wait cap, say): the same rows and users, another
    /// process and port. Its ``stop()`` leaves the database to `other`'s.
    init(beside other: FerryServer, settings: [String: String]) throws {
        database = other.database
        ownsDatabase = false
        serve = try Self.serve(database, settings)
    }

    private static func serve(_ database: ScratchDatabase, _ settings: [String: String]) throws -> FerryServeProcess {
        try FerryServeProcess(
            databaseURL: database.appURL,
            settings: [
                "FERRY_DATABASE_MIGRATION_URL": database.ownerURL,
                "FERRY_MEMCACHED_SERVERS": try TestEnvironment.memcached(),
            ]
            .merging(settings) { $1 })
    }

    /// The server's process id (0 while it is down).
    var pid: Int32 { serve.pid ?? 0 }

    /// Stops the process (SIGTERM: in-flight requests finish) and starts a new
    /// one on the same port and database, as a deploy or a crash-restart would;
    /// `settings` change its `FERRY_*` variables from then on.
    /// Purges every tombstone and moves the purge horizon to now: every device's
    /// cursor is then behind it, and its next poll is answered 410 `cursor_expired`.
    func expireEveryCursor() throws {
        let owner = try database.connect()
        defer { owner.close() }
        _ = try owner.query("SELECT ferry.purge_tombstones(0, 1000)")
        _ = try owner.query("UPDATE ferry.purge_horizon SET horizon_xid = pg_current_xact_id()")
    }

    func restart(settings: [String: String] = [:]) throws {
        serve.stop()
        serve.change(settings)
        try serve.start()
    }

    /// Adds a user with `ferry user add` and signs in over HTTP.
    func user(_ name: String) async throws -> (token: String, userID: String) {
        // A machine busy with other suites can make PostgreSQL slow to accept a
        // connection (libpq's connect timeout): that is the harness's trouble,
        // so the command is tried again, not the seed failed.
        var added = try FerryProcess.run(
            ["user", "add", name], environment: ["FERRY_DATABASE_MIGRATION_URL": database.ownerURL],
            input: "secret-\(name)\n")
        for _ in 0..<3 where added.status != 0 && added.stderr.contains("cannot connect") {
            // A real sleep: a retry's backoff; the three attempts bound it, and the status is checked below.
            try await Task.sleep(for: .seconds(1))
            added = try FerryProcess.run(
                ["user", "add", name], environment: ["FERRY_DATABASE_MIGRATION_URL": database.ownerURL],
                input: "secret-\(name)\n")
        }
        guard added.status == 0 else { throw TestEnvironment.Missing(description: "ferry user add: \(added.stderr)") }
        return try await signIn(name)
    }

    /// A user as ``user(_:)`` makes one, signed in over HTTP the same way, but
    /// added by SQL with bcrypt's cheapest cost (4, where `ferry user add` uses
    /// 10). The simulations add two or three users a seed, hundreds a run:
    /// `ferry user add`'s process and the two full-cost hashes (add, sign in)
    /// were 0.48 s a user, 40% of a seed (issue 49), and checked nothing the
    /// simulations are for; `user(_:)`'s own tests keep the real path.
    func quickUser(_ name: String) async throws -> (token: String, userID: String) {
        // Busy PostgreSQL can be slow to accept a connection, as for `user(_:)`: tried again.
        var attempt = 0
        while true {
            do {
                _ = try database.ownerQuery(
                    "INSERT INTO ferry.users (name, password_hash) VALUES ($1, crypt($2, gen_salt('bf', 4)))", [name, "secret-\(name)"])
                break
            } catch let error as PostgresError where error.kind == .connection && attempt < 3 {
                attempt += 1
                // A real sleep: a retry's backoff; the three attempts bound it.
                try await Task.sleep(for: .seconds(1))
            }
        }
        return try await signIn(name)
    }

    /// Signs `name` in over HTTP, with the password ``user(_:)`` and ``quickUser(_:)`` give it.
    private func signIn(_ name: String) async throws -> (token: String, userID: String) {
        // Signing in runs a slow password hash in PostgreSQL; a server busy with
        // the other suites may answer 503 for a moment, and an app would retry.
        var attempt = 0
        while true {
            do {
                return try await FerryAuth.signIn(
                    transport: SocketTransport.chosen(baseURL: baseURL, timeout: 30), name: name, password: "secret-\(name)")
            } catch FerryKitError.signInFailed(let status) where (status == 503 || status == 429) && attempt < 20 {
                attempt += 1
                // A real sleep: a retry's backoff, as an app's; the attempts bound it.
                try await Task.sleep(for: .milliseconds(250 * attempt))
            } catch is URLError where attempt < 5 {
                attempt += 1
            }
        }
    }

    func stop() {
        serve.stop()
        if ownsDatabase { database.drop() }
    }
}

/// A device: its own store file and engine, against the server.
struct Device {
    let store: FerryStore
    let engine: SyncEngine
    let transport: FaultyTransport

    init(
        server: FerryServer, token: String, resolvers: [String: ThreeWayMerge.Resolver] = [:],
        path: String = ":memory:", inner: (any Transport)? = nil,
        initialSyncOrder: [DownloadStep] = [], pageSize: Int = 1_000
    ) throws {
        store = try FerryStore(path: path)
        transport = FaultyTransport(inner ?? URLSessionTransport(baseURL: server.baseURL))
        engine = SyncEngine(
            store: store, transport: transport, tokens: FixedToken(token), policy: RetryPolicy(base: 0.01, cap: 0.05),
            resolvers: resolvers, initialSyncOrder: initialSyncOrder, pageSize: pageSize, random: { 0.5 })
    }
}

extension Device {
    /// Syncs until `condition` holds. The changes feed serves a write once every
    /// transaction that was running when it committed has ended, cluster-wide,
    /// and the other suites share the cluster; so what another device wrote may
    /// take a few polls to arrive, as it would for a real app polling a busy server.
    func sync(until condition: () throws -> Bool, timeout: Double = 180) async throws {
        try await waitUntilAsync("sync to converge", within: timeout) {
            try await engine.sync()
            return try condition()
        }
    }

    /// The server's rows of `resource` whose `column` is `value`, read through
    /// Index (which sees every committed row at once), as this device's user.
    func serverRows(_ resource: String, _ column: String, _ value: String, token: String) async throws -> [RowData] {
        let query = value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? value
        let response = try await transport.inner.send(
            TransportRequest(
                method: "GET", path: "/v1/\(resource)?\(column)=\(query)", headers: ["Authorization": "Bearer \(token)"]))
        guard case .array(let rows)? = response.object?["data"] else { return [] }
        return rows.compactMap(\.object)
    }
}
