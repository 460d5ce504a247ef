import FerryPostgres

/// Tombstone retention: calls `ferry.purge_tombstones(age_ms, batch)`, then
/// `ferry.purge_access_log(age_ms, batch)`, each until a batch comes back
/// short. Each call is its own short transaction, so a big purge never holds
/// locks or the changes-feed frontier for long.
///
/// Used by `ferry purge` (as the owner) and by the server's periodic
/// ``TombstonePurger`` (as the serve role; both functions are SECURITY DEFINER).
public enum TombstonePurge {
    /// Rows per call.
    public static let defaultBatch = 1_000

    /// Milliseconds in `days`.
    public static func ageMs(days: Int) -> Int64 { Int64(days) * 86_400_000 }

    /// What a purge call removes.
    public enum Kind: String, Sendable, CaseIterable {
        /// Soft-deleted rows of synced tables (`ferry.purge_tombstones`).
        case tombstones
        /// Access grant and revocation entries (`ferry.purge_access_log`).
        case accessLog = "access log entries"

        var function: String { self == .tombstones ? "ferry.purge_tombstones" : "ferry.purge_access_log" }
    }

    /// Purges everything older than `ageMs`, tombstones first, then the
    /// access log; `progress(kind, batchCount, totalOfKind)` runs after each
    /// call. Returns the total number of rows deleted.
    @discardableResult
    public static func run(
        connection: PostgresConnection, ageMs: Int64, batch: Int = defaultBatch,
        shouldContinue: () -> Bool = { true }, progress: (Kind, Int64, Int64) -> Void = { _, _, _ in }
    ) throws -> Int64 {
        precondition(batch > 0 && ageMs >= 0)
        var all: Int64 = 0
        for kind in Kind.allCases {
            var total: Int64 = 0
            while shouldContinue() {
                let result = try connection.run("SELECT \(sql: kind.function)(\(bind: .int(ageMs)), \(bind: batch)) AS purged")
                let n = try result.first?.int64("purged") ?? 0
                total += n
                progress(kind, n, total)
                if n < Int64(batch) { break }
            }
            all += total
        }
        return all
    }
}
