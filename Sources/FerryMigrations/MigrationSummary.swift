/// The outcome of a successful migration run (or dry run).
public struct MigrationSummary: Sendable, Equatable {
    /// Files applied by this run, in order, with their durations in milliseconds.
    public var applied: [AppliedFile]
    /// Dry run only: files that a real run would apply, in order.
    public var wouldApply: [PendingFile]
    /// Files that were already applied before this run, both tracks.
    public var alreadyApplied: Int
    /// Applied versions with no file.
    public var missing: [AppliedMigration]
    /// Whether this was a dry run (nothing was run).
    public var dryRun: Bool
    /// Whether the app's files were looked at (an app directory was given).
    public var appChecked: Bool
    /// The whole run's wall time in milliseconds, lock wait included.
    public var durationMs: Int

    /// A file applied by a run.
    public struct AppliedFile: Sendable, Equatable {
        public var track: MigrationTrack
        public var fileName: String
        /// How long it took, commit included.
        public var durationMs: Int
    }

    /// A file a dry run found pending.
    public struct PendingFile: Sendable, Equatable {
        public var track: MigrationTrack
        public var fileName: String
    }

    /// The closing line `ferry migrate` prints.
    public var line: String {
        var text: String
        if dryRun {
            text =
                wouldApply.isEmpty
                ? "dry run: nothing to apply"
                : "dry run: \(Self.count(wouldApply.count)) would be applied; nothing was run"
        } else if applied.isEmpty {
            text = "nothing to apply"
        } else {
            text = "applied \(Self.count(applied.count)) in \(durationMs) ms"
        }
        text += " (\(alreadyApplied) already applied"
        if !missing.isEmpty { text += ", \(missing.count) missing" }
        if !appChecked { text += "; no app directory given, so only Ferry's own" }
        return text + ")"
    }

    private static func count(_ value: Int) -> String {
        value == 1 ? "1 migration" : "\(value) migrations"
    }
}
