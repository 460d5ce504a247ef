extension MigrationPlan {
    /// One line per version, indented, for `ferry migrate status`:
    ///
    /// ```
    ///   0001_ferry_core.sql     applied 2026-01-02 10:00:00 UTC (120 ms)
    ///   0016_live_sync.sql      pending
    /// ```
    public func entryLines() -> [String] {
        let width = entries.map(\.fileName.count).max() ?? 0
        return entries.map { entry in
            let name = "  " + entry.fileName.padded(to: width + 2)
            switch entry.state {
            case let .applied(record):
                return "\(name)applied \(record.appliedAt) (\(record.durationMs) ms)"
            case .pending:
                return "\(name)pending"
            case let .changed(record, current):
                return "\(name)changed (applied \(record.appliedAt) as \(MigrationError.abbreviated(record.checksum)), "
                    + "file is now \(MigrationError.abbreviated(current)))"
            case let .missing(record):
                return "\(name)missing (applied \(record.appliedAt), no such file \(track == .core ? "built in" : "on disk"))"
            }
        }
    }

    /// `core: 11 applied, 1 pending, 0 changed, 0 missing`
    public var countsLine: String {
        "\(track.rawValue): \(upToDate) applied, \(pending.count) pending, \(changed.count) changed, \(missing.count) missing"
    }
}

extension String {
    /// The string followed by spaces up to `length` characters.
    fileprivate func padded(to length: Int) -> String {
        count >= length ? self : self + String(repeating: " ", count: length - count)
    }
}
