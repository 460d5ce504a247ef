import FerryPostgres

/// Tombstone retention: calls `ferry.purge_tombstones(age_ms, batch)` until a
/// batch comes back short. Each call is its own short transaction, so a big
/// purge never holds locks or the changes-feed frontier for long.
///
/// Used by `ferry purge` (as the owner) and by the server's periodic
/// ``TombstonePurger`` (as the serve role; the function is SECURITY DEFINER).
public enum TombstonePurge {
    /// Rows per call.
    public static let defaultBatch = 1_000

    /// Milliseconds in `days`.
    public static func ageMs(days: Int) -> Int64 { Int64(days) * 86_400_000 }

    /// Purges everything older than `ageMs`; `progress(batchCount, total)`
    /// runs after each call. Returns the total number of rows deleted.
    @discardableResult
    public static func run(
        connection: PostgresConnection, ageMs: Int64, batch: Int = defaultBatch,
        shouldContinue: () -> Bool = { true }, progress: (Int64, Int64) -> Void = { _, _ in }
    ) throws -> Int64 {
        precondition(batch > 0 && ageMs >= 0)
        var total: Int64 = 0
        while shouldContinue() {
            let result = try connection.query("SELECT ferry.purge_tombstones($1, $2)", [String(ageMs), String(batch)])
            let n = result.first?[0].flatMap(Int64.init) ?? 0
            total += n
            progress(n, total)
            if n < Int64(batch) { break }
        }
        return total
    }
}
