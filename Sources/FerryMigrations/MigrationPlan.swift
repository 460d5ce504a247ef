/// What one track's files and its rows of `ferry.schema_migrations` say together: which
/// files are applied, pending, changed since they were applied, or applied but missing.
///
/// Pure; built from values, so it can be checked without a database.
public struct MigrationPlan: Sendable {
    /// The track it describes.
    public var track: MigrationTrack
    /// The state of one version.
    public enum State: Sendable, Equatable {
        /// Applied, and the file on disk still matches.
        case applied(AppliedMigration)
        /// On disk, not applied yet.
        case pending
        /// Applied, but the file's bytes differ now; a migration run refuses to start.
        case changed(AppliedMigration, currentChecksum: String)
        /// Applied, but no file on disk has its version any more (a warning only).
        case missing(AppliedMigration)
    }

    /// One version, from disk, from the table, or from both.
    public struct Entry: Sendable, Equatable {
        public var version: Int
        /// The file name on disk, or the recorded one when the file is missing.
        public var fileName: String
        public var state: State
    }

    /// Every version, ascending.
    public var entries: [Entry]
    /// Files still to run, in the order they will run.
    public var pending: [MigrationFile]
    /// Applied files whose bytes changed.
    public var changed: [MigrationError.ChangedMigration]
    /// Applied versions without a file on disk.
    public var missing: [AppliedMigration]
    /// How many applied files still match the disk.
    public var upToDate: Int
    /// The applied versions, when they are another history than the files': some are
    /// applied, none of them is a file here (the same version under the same name or
    /// with the same bytes), and a
    /// file here is older than the newest of them. Another app's database (or directory):
    /// `deploy/run.sh`'s demo database given to a new app, whose 0001 would run on top.
    /// Empty otherwise. A team that deleted applied files keeps only newer ones, so those
    /// are not refused.
    public var foreignHistory: [AppliedMigration]

    /// Compares a track's files with its recorded migrations (rows of other tracks in
    /// `applied` are ignored).
    public init(track: MigrationTrack, files: [MigrationFile], applied: [AppliedMigration]) {
        self.track = track
        let applied = applied.filter { $0.track == track }
        let recorded = Dictionary(applied.map { ($0.version, $0) }, uniquingKeysWith: { first, _ in first })
        let onDisk = Set(files.map(\.version))
        var entries: [Entry] = []
        pending = []
        changed = []
        upToDate = 0
        for file in files {
            guard let record = recorded[file.version] else {
                pending.append(file)
                entries.append(Entry(version: file.version, fileName: file.fileName, state: .pending))
                continue
            }
            if record.checksum == file.checksum {
                upToDate += 1
                entries.append(Entry(version: file.version, fileName: file.fileName, state: .applied(record)))
            } else {
                changed.append(.init(fileName: file.fileName, appliedChecksum: record.checksum, currentChecksum: file.checksum))
                entries.append(
                    Entry(
                        version: file.version, fileName: file.fileName,
                        state: .changed(record, currentChecksum: file.checksum)))
            }
        }
        missing = applied.filter { !onDisk.contains($0.version) }.sorted { $0.version < $1.version }
        entries += missing.map { Entry(version: $0.version, fileName: $0.fileName, state: .missing($0)) }
        entries.sort { $0.version < $1.version }
        self.entries = entries
        let shared = applied.contains { record in
            files.contains { $0.version == record.version && ($0.fileName == record.fileName || $0.checksum == record.checksum) }
        }
        let newest = applied.map(\.version).max() ?? 0
        foreignHistory =
            !shared && files.contains(where: { $0.version < newest })
            ? applied.sorted { $0.version < $1.version } : []
    }
}
