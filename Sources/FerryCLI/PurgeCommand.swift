import ArgumentParser
import Ferry
import FerryPostgres
import Foundation

/// `ferry purge`: removes tombstones (and access log entries) older than
/// `tombstones.retention_days`, in short batches, printing progress.
struct PurgeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "purge",
        abstract: "Delete tombstones older than tombstones.retention_days.",
        discussion: """
            Connects as database.migration_url and calls ferry.purge_tombstones, then ferry.purge_access_log, in batches until none are left. \
            Change cursors from before the purged rows then answer 410 cursor_expired. The server also purges \
            every tombstones.purge_interval_seconds.
            """
    )

    @OptionGroup var options: ConfigOptions

    @Option(name: .long, help: "Rows per transaction.")
    var batch: Int = TombstonePurge.defaultBatch

    @Option(name: .long, help: "Override tombstones.retention_days (0 purges every tombstone).")
    var retentionDays: Int?

    func run() throws {
        guard batch >= 1, batch <= 1_000_000 else { throw ValidationError("--batch must be from 1 to 1000000") }
        let config = try options.load()
        let days = retentionDays ?? config.tombstones.retentionDays
        guard days >= 0 else { throw ValidationError("--retention-days must not be negative") }
        let connection: PostgresConnection
        do {
            connection = try PostgresConnection(url: config.database.migrationURL, applicationName: "ferry")
        } catch {
            FileHandle.standardError.write(Data("ferry purge: cannot connect: \(error.message)\n".utf8))
            throw ExitCode.failure
        }
        defer { connection.close() }
        print("purging tombstones older than \(days) days, \(batch) per batch")
        do {
            let total = try TombstonePurge.run(
                connection: connection, ageMs: TombstonePurge.ageMs(days: days), batch: batch,
                progress: { kind, n, total in
                    print("purged \(n) \(kind.rawValue) (\(total) so far)")
                })
            print("done: \(total) purged")
        } catch let error as PostgresError {
            FileHandle.standardError.write(Data("ferry purge: \(error.message)\n".utf8))
            throw ExitCode.failure
        }
    }
}
