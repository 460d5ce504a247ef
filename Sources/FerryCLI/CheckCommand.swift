import ArgumentParser
import Ferry
import FerryPostgres
import Foundation

/// `ferry check`: lints the app's schema as Ferry serves it.
struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Report what is wrong with the app's synced tables: a leak, a write that always fails, a stall.",
        discussion: """
            Connects as the serve role (database.url) and reads every synced table: Row Level Security \
            and its policies (any a sync rule did not generate), the id (one a device cannot make offline), \
            the grants (any beyond the rule's), the indexes, the access scopes and their triggers, and the \
            views and SECURITY DEFINER functions the role may use that read synced rows past Row Level \
            Security; then \
            reads each table and plans an update as a user no row belongs to, in a transaction it rolls \
            back. Each finding names the object and the fix. Exits 0 when there is no error (warnings are \
            printed), 1 when there is one (or a warning, with --strict), 2 when the database cannot be checked.
            """
    )

    @OptionGroup var options: ConfigOptions

    @Flag(help: "Print the findings as a JSON array.")
    var json = false

    @Flag(help: "Fail on warnings too.")
    var strict = false

    func run() throws {
        let config = try options.load()
        let findings: [SchemaFinding]
        let tables: Int
        do {
            let report = try SchemaReport.run(url: config.database.url, schema: config.database.schema, applicationName: "ferry check")
            findings = report.findings
            tables = report.tables
        } catch let error as PostgresError {
            FileHandle.standardError.write(Data("ferry check: cannot check the database: \(error.message)\n".utf8))
            throw ExitCode(2)
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(findings), as: UTF8.self))
        } else {
            for finding in findings { print(finding.text) }
            print(findings.summary(tables: tables))
        }
        if findings.contains(where: { $0.severity == .error || strict }) { throw ExitCode.failure }
    }
}
