import FerryBase
import FerryHTTP
import FerryPostgres

/// What holds the changes feed's frontier back now, and for how long (core
/// 0024, `ferry.feed_hold()`; docs/changes-feed.md, "What still holds the
/// frontier"), for `/metrics` and `/readyz`. Asked only when one of them is
/// asked, so it costs nothing between probes.
public final class FeedHoldWatch: Sendable {
    /// The transaction holding the frontier.
    public struct Hold: Sendable, Equatable {
        public let xid: UInt64
        /// `prepared`, `idle_in_transaction`, `synced_writer`, `unsynced_writer` or `ended` (0024).
        public let kind: String
        /// Since its transaction began when PostgreSQL shows it, else since this
        /// instance first saw it hold (without `pg_read_all_stats`, another role's
        /// start is hidden).
        public let seconds: Double
    }

    /// Every kind `ferry.feed_hold()` names, for a metric sample each.
    public static let kinds = ["prepared", "idle_in_transaction", "synced_writer", "unsynced_writer", "ended"]

    private let database: PostgresGateway
    /// A hold longer than this is reported over its limit (`live.max_feed_hold_seconds`).
    public let limitSeconds: Double
    /// The xid last seen holding, and when this instance first saw it.
    private let firstSeen = Locked<(xid: UInt64, at: Double)?>(nil)

    init(database: PostgresGateway, limitSeconds: Double) {
        self.database = database
        self.limitSeconds = limitSeconds
    }

    static let statement = PlannedStatement("SELECT xid, kind, held_ms FROM ferry.feed_hold()")

    /// The hold now; nil when nothing holds the feed. Throws when PostgreSQL cannot be asked.
    public func current() throws -> Hold? {
        // Asked by probes, which must answer while PostgreSQL is frozen too.
        let result = try database.anonymous([Self.statement], answerLimit: PostgresGateway.probeAnswerLimit)[0]
        let now = MonotonicClock.now()
        guard let row = result.first, let xid = try row.uint64("xid"), let kind = try row.string("kind") else {
            firstSeen.withLock { $0 = nil }
            return nil
        }
        let since = firstSeen.withLock { seen -> Double in
            if let seen, seen.xid == xid { return seen.at }
            seen = (xid, now)
            return now
        }
        let observed = now - since
        let reported = try row.int64("held_ms").map { Double($0) / 1000 } ?? 0
        return Hold(xid: xid, kind: kind, seconds: max(observed, reported))
    }
}
