extension MigrationPlan {
    /// The `ferry migrate status` table: one line per version, then a count of each state.
    ///
    /// ```
    /// 0001_ferry_core.sql     applied 2026-01-02 10:00:00 UTC (120 ms)
    /// 0002_example_app.sql    pending
    /// 2 files: 1 applied, 1 pending, 0 changed, 0 missing
    /// ```
    public func statusReport() -> String {
        let width = entries.map(\.fileName.count).max() ?? 0
        var lines: [String] = entries.map { entry in
            let name = entry.fileName.padded(to: width + 2)
            switch entry.state {
            case let .applied(record):
                return "\(name)applied \(record.appliedAt) (\(record.durationMs) ms)"
            case .pending:
                return "\(name)pending"
            case let .changed(record, current):
                return "\(name)changed (applied \(record.appliedAt) as \(MigrationError.abbreviated(record.checksum)), "
                    + "file is now \(MigrationError.abbreviated(current)))"
            case let .missing(record):
                return "\(name)missing (applied \(record.appliedAt), no such file on disk)"
            }
        }
        if entries.isEmpty { lines.append("no migrations on disk or in the database") }
        lines.append(
            "\(upToDate) applied, \(pending.count) pending, \(changed.count) changed, \(missing.count) missing")
        return lines.joined(separator: "\n")
    }
}

extension String {
    /// The string followed by spaces up to `length` characters.
    fileprivate func padded(to length: Int) -> String {
        count >= length ? self : self + String(repeating: " ", count: length - count)
    }
}
