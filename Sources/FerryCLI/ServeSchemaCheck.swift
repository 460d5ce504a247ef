import Ferry
import FerryPostgres
import Logging

/// `ferry check` at `ferry serve`'s start (database.schema_check): each finding is
/// logged, naming its object, cause and fix, so a leak made by hand on a live database
/// shows in the log of the next start.
///
/// `warn` (the default) serves whatever was found. Refusing to start is the operator's
/// choice (`refuse`), not the default: a Ferry upgrade that adds a check, or a hand edit
/// on one table, would otherwise take every user's sync down at the next restart, and
/// CI is where an error should stop a release (`ferry check` exits 1).
enum ServeSchemaCheck {
    /// Whether the server may start.
    static func allowsStart(_ config: FerryConfiguration, logger: Logger) -> Bool {
        guard config.database.schemaCheck != "off" else { return true }
        let report: SchemaReport
        do {
            report = try SchemaReport.run(url: config.database.url, schema: config.database.schema, applicationName: "ferry serve check")
        } catch let error as PostgresError where error.kind == .connection {
            // Start-up connects again and says what is wrong with the database itself:
            // one message for one cause, not a warning before the critical line.
            return true
        } catch {
            logger.warning("ferry check: the schema could not be checked at start: \(error)")
            return true
        }
        for finding in report.findings {
            let line: Logger.Message =
                "ferry check: \(finding.severity.rawValue) \(finding.code) \(finding.object): \(finding.message); fix: \(finding.fix)"
            if finding.severity == .error { logger.error(line) } else { logger.warning(line) }
        }
        let refuse = config.database.schemaCheck == "refuse" && !report.errors.isEmpty
        if !report.findings.isEmpty {
            logger.warning(
                "ferry check: \(report.findings.summary(tables: report.tables))\(refuse ? "; not starting (database.schema_check is refuse)" : "")")
        }
        return !refuse
    }
}
