import Dispatch
import FerryPostgres
import Foundation
import Logging
import Synchronization

/// The server's periodic purge: a background thread that runs
/// ``TombstonePurge`` every `interval` through the serve pool, until
/// ``stop()``. A failed round is logged and retried at the next interval.
public final class TombstonePurger: Sendable {
    private let pool: PostgresPool
    private let ageMs: Int64
    private let interval: Double
    private let batch: Int
    private let logger: Logger
    private let stopping = Atomic<Bool>(false)
    private let started = Atomic<Bool>(false)
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    /// A purger over `pool` removing tombstones older than `retentionDays`,
    /// every `intervalSeconds`.
    public init(
        pool: PostgresPool, retentionDays: Int, intervalSeconds: Double, batch: Int = TombstonePurge.defaultBatch,
        logger: Logger
    ) {
        self.pool = pool
        self.ageMs = TombstonePurge.ageMs(days: retentionDays)
        self.interval = intervalSeconds
        self.batch = batch
        self.logger = logger
    }

    /// Starts the thread (once). The first round runs after one interval.
    public func start() {
        guard interval > 0, !started.exchange(true, ordering: .acquiringAndReleasing) else { return }
        Thread.detachNewThread { [self] in
            defer { finished.signal() }
            while true {
                _ = wake.wait(timeout: .now() + interval)
                if stopping.load(ordering: .acquiring) { return }
                round()
            }
        }
    }

    /// Asks the thread to stop and waits for it (a round in progress finishes its current batch).
    public func stop() {
        guard started.load(ordering: .acquiring), !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        wake.signal()
        finished.wait()
    }

    private func round() {
        do {
            let total = try pool.withConnection { connection in
                try TombstonePurge.run(
                    connection: connection, ageMs: ageMs, batch: batch,
                    shouldContinue: { !stopping.load(ordering: .acquiring) })
            }
            if total > 0 { logger.info("purged \(total) tombstones and access log entries") }
        } catch {
            logger.error("tombstone purge failed; retrying at the next interval", metadata: ["error": "\(error)"])
        }
    }
}
