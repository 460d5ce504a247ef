import Dispatch
import FerryHTTPTestSupport
import Foundation
import FerryPostgres
import Synchronization
import Testing
import FerryTestSupport
@testable import Ferry
@testable import FerryMigrations

/// The outcome of one run on a thread, with the events it reported.
struct ThreadRun: Sendable {
    var result: Result<MigrationSummary, MigrationError>
    var events: [MigrationEvent]
}

@Suite struct MigratorConcurrencyTests {
    static let files = [
        "0001_log.sql": "CREATE TABLE public.log (file text NOT NULL);\n",
        // The sleep keeps the first run inside its lock while the second one arrives.
        "0002_slow.sql": "INSERT INTO public.log VALUES ('0002');\nSELECT pg_sleep(0.5);\n",
        "0003_more.sql": "INSERT INTO public.log VALUES ('0003');\n",
    ]

    private static func run(_ migrator: Migrator, waiting: Flag? = nil) -> ThreadRun {
        var events: [MigrationEvent] = []
        let result = Result { () throws(MigrationError) in
            try migrator.migrate { event in
                events.append(event)
                if event == .waitingForLock { waiting?.raise() }
            }
        }
        return ThreadRun(result: result, events: events)
    }

    @Test func concurrentRunsTakeTurnsAndApplyEachFileOnce() throws {
        let database = try ScratchDatabase.create()
        defer { database.drop() }
        let fixture = try MigrationFixture(Self.files)
        defer { fixture.destroy() }
        let migrator = try fixture.migrator(database.url)

        let first = startThread { Self.run(migrator) }
        let second = startThread { Self.run(migrator) }
        let runs = [first.wait(), second.wait()]

        var applied: [String] = []
        for run in runs {
            let summary = try run.result.get()
            applied += summary.applied.map(\.fileName)
        }
        #expect(applied.sorted() == ["0001_log.sql", "0002_slow.sql", "0003_more.sql"])
        // The lock is held for the whole run, so one run applies everything and the other none.
        #expect(runs.map { (try? $0.result.get())?.applied.count ?? -1 }.sorted() == [0, 3])
        #expect(try database.column("SELECT file FROM public.log ORDER BY file") == ["0002", "0003"])
        #expect(try database.column("SELECT count(*) FROM ferry.schema_migrations") == ["3"])
    }

    @Test func runWaitsForTheLockThenFindsItsWork() throws {
        let database = try ScratchDatabase.create()
        defer { database.drop() }
        let fixture = try MigrationFixture(["0001_log.sql": Self.files["0001_log.sql"]!])
        defer { fixture.destroy() }
        let migrator = try fixture.migrator(database.url)

        let holder = try database.connect()
        defer { holder.close() }
        _ = try holder.query("SELECT pg_advisory_lock($1::bigint)", [String(MigrationLock.key)])

        let waiting = Flag()
        let run = startThread { Self.run(migrator, waiting: waiting) }
        #expect(eventually(within: 10) { waiting.isRaised }, "the migrator never reported waiting for the lock")
        // Still waiting: nothing may have been applied while another session holds the lock.
        #expect(try database.column("SELECT to_regclass('ferry.schema_migrations')::text") == [nil])
        _ = try holder.query("SELECT pg_advisory_unlock($1::bigint)", [String(MigrationLock.key)])

        let outcome = run.wait()
        #expect(try outcome.result.get().applied.map(\.fileName) == ["0001_log.sql"])
        #expect(outcome.events.first == .waitingForLock)
        #expect(outcome.events.first?.line == "waiting for another migration to finish")
    }

    @Test func lockTimeoutGivesUpWithoutApplyingAnything() throws {
        let database = try ScratchDatabase.create()
        defer { database.drop() }
        let fixture = try MigrationFixture(["0001_log.sql": Self.files["0001_log.sql"]!])
        defer { fixture.destroy() }
        let migrator = try fixture.migrator(database.url, lockTimeout: 0.3)

        let holder = try database.connect()
        defer { holder.close() }
        _ = try holder.query("SELECT pg_advisory_lock($1::bigint)", [String(MigrationLock.key)])

        let started = ContinuousClock.now
        let outcome = startThread { Self.run(migrator) }.wait()
        let elapsed = ContinuousClock.now - started
        guard case .failure(.lockTimeout) = outcome.result else {
            Issue.record("expected lockTimeout, got \(outcome.result)")
            return
        }
        #expect(elapsed >= .milliseconds(300) && elapsed < .seconds(5))
        #expect("\(MigrationError.lockTimeout(seconds: 0.3))" == "gave up after waiting 0.3 s for another migration to finish")
        #expect(try database.column("SELECT to_regclass('ferry.schema_migrations')::text") == [nil])
    }
}
