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
/// CI is where an error should stop a release (`ferry check` exits 1). One finding stops
/// it under `warn` too: Row Level Security that does not apply to the serve role (it
/// owns the tables, or is a superuser): that is a deployment serving every user every
/// row, not a table's mistake (`off` still starts).
enum ServeSchemaCheck {
    /// Why the server may not start, or nil when it may.
    static func refusal(_ config: FerryConfiguration, logger: Logger) -> String? {
        guard config.database.schemaCheck != "off" else { return nil }
        let report: SchemaReport
        do {
            report = try SchemaReport.run(url: config.database.url, schema: config.database.schema, applicationName: "ferry serve check")
        } catch let error as PostgresError where error.kind == .connection {
            // Start-up connects again and says what is wrong with the database itself:
            // one message for one cause, not a warning before the critical line.
            return nil
        } catch {
            logger.warning("ferry check: the schema could not be checked at start: \(error)")
            return nil
        }
        for finding in report.findings {
            let line: Logger.Message =
                "ferry check: \(finding.severity.rawValue) \(finding.code) \(finding.object): \(finding.message); fix: \(finding.fix)"
            if finding.severity == .error { logger.error(line) } else { logger.warning(line) }
        }
        let refuse = config.database.schemaCheck == "refuse" && !report.errors.isEmpty
        let bypassed = report.findings.filter { $0.code == "row_level_security_bypassed" }
        if !report.findings.isEmpty {
            logger.warning(
                "ferry check: \(report.findings.summary(tables: report.tables))\(refuse || !bypassed.isEmpty ? "; not starting" : "")")
        }
        if !bypassed.isEmpty {
            return "the serve role (database.url's) is not held by Row Level Security on \(bypassed.count) synced "
                + "table\(bypassed.count == 1 ? "" : "s"), so every user would read and write every row: serve as a role "
                + "that owns nothing (ferry_app), and migrate as the owner (database.migration_url); "
                + "database.schema_check off starts anyway"
        }
        return refuse ? "ferry check found errors in the schema, and database.schema_check is refuse" : nil
    }
}
