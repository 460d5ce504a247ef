import Foundation
import Testing
import FerryTestSupport
@testable import Ferry
@testable import FerryMigrations

@Suite struct MigrationPlanTests {
    private func file(_ version: Int, _ name: String, _ sql: String) throws -> MigrationFile {
        try MigrationFile(fileName: name, path: "/m/\(name)", contents: Data(sql.utf8))
    }

    private func record(_ file: MigrationFile, checksum: String? = nil) -> AppliedMigration {
        AppliedMigration(
            track: .app, version: file.version, fileName: file.fileName, checksum: checksum ?? file.checksum,
            appliedAt: "2026-01-02 03:04:05 UTC", durationMs: 12)
    }

    @Test func classifiesEveryState() throws {
        let one = try file(1, "0001_one.sql", "SELECT 1;")
        let two = try file(2, "0002_two.sql", "SELECT 2;")
        let four = try file(4, "0004_four.sql", "SELECT 4;")
        let gone = AppliedMigration(
            track: .app, version: 3, fileName: "0003_gone.sql", checksum: "ab", appliedAt: "2026-01-01 00:00:00 UTC", durationMs: 5)
        let plan = MigrationPlan(
            track: .app, files: [one, two, four],
            applied: [record(one), record(two, checksum: String(repeating: "0", count: 64)), gone])
        #expect(plan.pending == [four])
        #expect(plan.upToDate == 1)
        #expect(plan.missing == [gone])
        #expect(
            plan.changed == [
                .init(
                    fileName: "0002_two.sql", appliedChecksum: String(repeating: "0", count: 64), currentChecksum: two.checksum)
            ])
        #expect(plan.entries.map(\.version) == [1, 2, 3, 4])

        #expect(
            plan.entryLines() + [plan.countsLine] == [
                "  0001_one.sql   applied 2026-01-02 03:04:05 UTC (12 ms)",
                "  0002_two.sql   changed (applied 2026-01-02 03:04:05 UTC as 000000000000, file is now \(two.checksum.prefix(12)))",
                "  0003_gone.sql  missing (applied 2026-01-01 00:00:00 UTC, no such file on disk)",
                "  0004_four.sql  pending",
                "app: 1 applied, 1 pending, 1 changed, 1 missing",
            ])
    }

    /// Another app's history (deploy/run.sh's demo database given to a new app) is told
    /// apart from files deleted after they were applied, and from a history that shares a file.
    @Test func anotherAppsHistoryIsForeign() throws {
        let first = try file(1, "0001_first_tables.sql", "CREATE SCHEMA app;")
        let theirs = [
            AppliedMigration(
                track: .app, version: 2, fileName: "0002_example_app.sql", checksum: "aa", appliedAt: "2026-01-01 00:00:00 UTC",
                durationMs: 5),
            AppliedMigration(
                track: .app, version: 3, fileName: "0003_more.sql", checksum: "bb", appliedAt: "2026-01-01 00:00:01 UTC",
                durationMs: 5),
        ]
        let foreign = MigrationPlan(track: .app, files: [first], applied: theirs.reversed())
        #expect(foreign.foreignHistory.map(\.version) == [2, 3])
        // Their version 1 under another name and other bytes shares nothing either.
        let theirOne = AppliedMigration(
            track: .app, version: 1, fileName: "0001_example.sql", checksum: "cc", appliedAt: "2026-01-01 00:00:00 UTC", durationMs: 5)
        #expect(MigrationPlan(track: .app, files: [first], applied: [theirOne] + theirs).foreignHistory.count == 3)
        // Applied files deleted, newer ones kept: the same app, going on.
        let four = try file(4, "0004_four.sql", "SELECT 4;")
        #expect(MigrationPlan(track: .app, files: [four], applied: theirs).foreignHistory.isEmpty)
        // One file shared (by name, or renamed with the same bytes): the same app.
        let renamed = AppliedMigration(
            track: .app, version: 1, fileName: "0001_old_name.sql", checksum: first.checksum, appliedAt: "2026-01-01 00:00:00 UTC",
            durationMs: 5)
        #expect(MigrationPlan(track: .app, files: [first], applied: [record(first)] + theirs).foreignHistory.isEmpty)
        #expect(MigrationPlan(track: .app, files: [first], applied: [renamed] + theirs).foreignHistory.isEmpty)
        // Nothing applied, or no files: nothing to compare.
        #expect(MigrationPlan(track: .app, files: [first], applied: []).foreignHistory.isEmpty)
        #expect(MigrationPlan(track: .app, files: [], applied: theirs).foreignHistory.isEmpty)
    }

    @Test func freshDatabaseHasEverythingPending() throws {
        let files = [try file(1, "0001_one.sql", "SELECT 1;"), try file(2, "0002_two.sql", "SELECT 2;")]
        let plan = MigrationPlan(track: .app, files: files, applied: [])
        #expect(plan.pending == files)
        #expect(plan.changed.isEmpty && plan.missing.isEmpty && plan.upToDate == 0)
    }

    @Test func failureDescriptionNamesFileLineAndMessage() {
        let failure = MigrationFailure(
            fileName: "0002_bad.sql", script: "-- x\nSELECT 1;\nSELEC 2;\n",
            error: .init(
                kind: .server, message: "syntax error at or near \"SELEC\"", sqlState: "42601",
                detail: "a detail", hint: "a hint", position: 16))
        #expect(
            failure.description == """
                migration 0002_bad.sql failed at line 3, column 1: syntax error at or near "SELEC" (SQLSTATE 42601)
                  3 | SELEC 2;
                    | ^
                  detail: a detail
                  hint: a hint
                0002_bad.sql was rolled back; no part of it was applied.
                """)
    }

    @Test func summaryLines() {
        var summary = MigrationSummary(
            applied: [.init(track: .app, fileName: "0001_a.sql", durationMs: 3)], wouldApply: [], alreadyApplied: 2,
            missing: [], dryRun: false, appChecked: true, durationMs: 40)
        #expect(summary.line == "applied 1 migration in 40 ms (2 already applied)")
        summary.applied = []
        #expect(summary.line == "nothing to apply (2 already applied)")
        summary.dryRun = true
        summary.wouldApply = [.init(track: .core, fileName: "0003_b.sql"), .init(track: .app, fileName: "0004_c.sql")]
        #expect(summary.line == "dry run: 2 migrations would be applied; nothing was run (2 already applied)")
        summary.appChecked = false
        #expect(summary.line.hasSuffix("(2 already applied; no app directory given, so only Ferry's own)"))
    }
}
