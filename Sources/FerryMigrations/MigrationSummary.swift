/// The outcome of a successful migration run (or dry run).
public struct MigrationSummary: Sendable, Equatable {
    /// Files applied by this run, in order, with their durations in milliseconds.
    public var applied: [AppliedFile]
    /// Dry run only: files that a real run would apply.
    public var wouldApply: [String]
    /// Files that were already applied before this run.
    public var alreadyApplied: Int
    /// Applied versions with no file on disk.
    public var missing: [AppliedMigration]
    /// Whether this was a dry run (nothing was run).
    public var dryRun: Bool
    /// The whole run's wall time in milliseconds, lock wait included.
    public var durationMs: Int

    /// A file applied by a run.
    public struct AppliedFile: Sendable, Equatable {
        public var fileName: String
        /// How long it took, commit included.
        public var durationMs: Int
    }

    /// The closing line `ferry migrate` prints.
    public var line: String {
        var text: String
        if dryRun {
            text = wouldApply.isEmpty
                ? "dry run: nothing to apply"
                : "dry run: \(Self.count(wouldApply.count)) would be applied; nothing was run"
        } else if applied.isEmpty {
            text = "nothing to apply"
        } else {
            text = "applied \(Self.count(applied.count)) in \(durationMs) ms"
        }
        text += " (\(alreadyApplied) already applied"
        if !missing.isEmpty { text += ", \(missing.count) missing from disk" }
        return text + ")"
    }

    private static func count(_ value: Int) -> String {
        value == 1 ? "1 migration" : "\(value) migrations"
    }
}
