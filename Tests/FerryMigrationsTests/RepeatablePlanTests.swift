import Foundation
import Testing
@testable import FerryMigrations

/// Which repeatable files a run applies: those never applied and those whose bytes
/// changed, in name order; the rest are current.
@Suite struct RepeatablePlanTests {
    private func file(_ name: String, _ sql: String) throws -> RepeatableFile {
        try RepeatableFile(name: name, path: "/m/\(name)", contents: Data(sql.utf8))
    }

    private func record(_ name: String, _ checksum: String) -> AppliedRepeatable {
        AppliedRepeatable(name: name, checksum: checksum, appliedAt: "2026-01-02 03:04:05 UTC", durationMs: 7)
    }

    @Test func classifiesEveryState() throws {
        let auth = try file("functions/auth.sql", "SELECT 1;")
        let feed = try file("functions/feed.sql", "SELECT 2;")
        let live = try file("functions/live.sql", "SELECT 3;")
        let old = String(repeating: "0", count: 64)
        let plan = RepeatablePlan(
            files: [auth, feed, live],
            applied: [record("functions/auth.sql", auth.checksum), record("functions/feed.sql", old), record("functions/gone.sql", "ab")])
        #expect(plan.due == [feed, live])
        #expect(plan.current == 1)
        #expect(plan.missing.map(\.name) == ["functions/gone.sql"])
        #expect(
            plan.entryLines() + [plan.countsLine] == [
                "  functions/auth.sql  applied 2026-01-02 03:04:05 UTC (7 ms)",
                "  functions/feed.sql  changed (applied 2026-01-02 03:04:05 UTC as 000000000000, file is now "
                    + "\(feed.checksum.prefix(12))): applied again by the next run",
                "  functions/gone.sql  missing (applied 2026-01-02 03:04:05 UTC, not built into this ferry)",
                "  functions/live.sql  pending",
                "core repeatable: 1 current, 2 due, 1 missing",
            ])
    }
}
