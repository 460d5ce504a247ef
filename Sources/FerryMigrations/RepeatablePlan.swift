/// What the repeatable files and the rows of `ferry.schema_repeatables` say together:
/// which files are current, which are due (never applied, or changed since), and which
/// rows have no file any more.
///
/// Pure; built from values, so it can be checked without a database.
public struct RepeatablePlan: Sendable {
    /// The state of one repeatable file.
    public enum State: Sendable, Equatable {
        /// Applied with the bytes the file has now.
        case current(AppliedRepeatable)
        /// Never applied: the next run applies it.
        case pending
        /// Applied with other bytes: the next run applies it again.
        case changed(AppliedRepeatable, currentChecksum: String)
        /// Recorded, but no such file any more (a warning only: what it defined stays
        /// until a versioned file drops it).
        case missing(AppliedRepeatable)
    }

    /// One file, from disk, from the table, or from both.
    public struct Entry: Sendable, Equatable {
        public var name: String
        public var state: State
    }

    /// Every file and row, by name.
    public var entries: [Entry]
    /// The files the next run applies, in the order it applies them.
    public var due: [RepeatableFile]
    /// How many files are current.
    public var current: Int
    /// Rows without a file.
    public var missing: [AppliedRepeatable]

    public init(files: [RepeatableFile], applied: [AppliedRepeatable]) {
        let recorded = Dictionary(applied.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let names = Set(files.map(\.name))
        entries = []
        due = []
        current = 0
        for file in files {
            if let record = recorded[file.name] {
                if record.checksum == file.checksum {
                    current += 1
                    entries.append(Entry(name: file.name, state: .current(record)))
                } else {
                    due.append(file)
                    entries.append(Entry(name: file.name, state: .changed(record, currentChecksum: file.checksum)))
                }
            } else {
                due.append(file)
                entries.append(Entry(name: file.name, state: .pending))
            }
        }
        missing = applied.filter { !names.contains($0.name) }
        entries += missing.map { Entry(name: $0.name, state: .missing($0)) }
        entries.sort { $0.name < $1.name }
    }

    /// One line per file, indented, for `ferry migrate status`:
    ///
    /// ```
    ///   functions/auth.sql   applied 2026-01-02 10:00:00 UTC (12 ms)
    ///   functions/feed.sql   changed (applied as 3f2a…, file is now 9c1b…): applied again by the next run
    /// ```
    public func entryLines() -> [String] {
        let width = entries.map(\.name.count).max() ?? 0
        return entries.map { entry in
            let name = "  " + entry.name + String(repeating: " ", count: width + 2 - entry.name.count)
            switch entry.state {
            case let .current(record):
                return "\(name)applied \(record.appliedAt) (\(record.durationMs) ms)"
            case .pending:
                return "\(name)pending"
            case let .changed(record, current):
                return "\(name)changed (applied \(record.appliedAt) as \(MigrationError.abbreviated(record.checksum)), "
                    + "file is now \(MigrationError.abbreviated(current))): applied again by the next run"
            case let .missing(record):
                return "\(name)missing (applied \(record.appliedAt), not built into this ferry)"
            }
        }
    }

    /// `core repeatable: 7 current, 0 due, 0 missing`
    public var countsLine: String {
        "core repeatable: \(current) current, \(due.count) due, \(missing.count) missing"
    }
}
