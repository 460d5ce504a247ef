import Ferry

/// A ``TestServer`` on a PostgreSQL cluster of its own (``TemporaryPostgres``),
/// for a test that stops, restarts or fills PostgreSQL under Ferry: the shared
/// test cluster keeps serving every other suite meanwhile.
public final class PrivateClusterServer: Sendable {
    /// The cluster, for the test to stop, restart or fill.
    public let cluster: TemporaryPostgres
    /// Ferry on a migrated scratch database in ``cluster``.
    public let server: TestServer

    /// Starts a cluster (its data on a tmpfs of `diskMegabytes`, when given), a
    /// migrated scratch database on it, and Ferry with a pool of 4: few
    /// connections to lose and open again when PostgreSQL goes away. `configure`
    /// may change that and anything else.
    public init(diskMegabytes: Int? = nil, _ configure: (inout FerryConfiguration) -> Void = { _ in }) throws {
        let cluster = try TemporaryPostgres(diskMegabytes: diskMegabytes)
        do {
            server = try TestServer(database: try ScratchDatabase(on: cluster)) { configuration in
                configuration.database.poolSize = 4
                configure(&configuration)
            }
        } catch {
            cluster.destroy()
            throw error
        }
        self.cluster = cluster
    }

    /// Stops Ferry, drops its database and destroys the cluster.
    public func stop() {
        server.stop()
        cluster.destroy()
    }
}
