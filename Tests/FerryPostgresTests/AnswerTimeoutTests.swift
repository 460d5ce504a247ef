import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Testing
@testable import FerryPostgres

/// A server that does not answer holds a caller no longer than `answerTimeout`: the call
/// throws `.connection` and the connection is given up. Each test's server is alive but
/// silent for far longer than the limit, so without the limit the call would succeed late.
@Suite struct AnswerTimeoutTests {
    /// Seconds from `start` to now.
    private func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = (ContinuousClock.now - start).components
        return Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
    }

    @Test func aStatementAnsweredTooLateGivesTheConnectionUp() throws {
        let connection = try ownerConnection()
        connection.answerTimeout = .milliseconds(300)
        let start = ContinuousClock.now
        let error = try #require(postgresError { try connection.query("SELECT pg_sleep(5)") })
        let waited = seconds(since: start)
        #expect(error.kind == .connection)
        #expect(error.message.contains("did not answer within"), "\(error.message)")
        #expect(connection.isBroken)
        #expect(waited >= 0.3)
        #expect(waited < 4.5, "waited \(waited) s")
    }

    @Test func aPipelineAnsweredTooLateGivesTheConnectionUp() throws {
        let connection = try ownerConnection(preparedStatements: true)
        connection.answerTimeout = .milliseconds(300)
        let start = ContinuousClock.now
        let error = try #require(
            postgresError {
                try connection.pipeline([PostgresStatement("SELECT 1"), PostgresStatement("SELECT pg_sleep(5)")], transaction: false)
            })
        // (No statement index to check: PostgreSQL sends a pipeline's results only at its
        // sync point, so the wait that gives up is the first one.)
        #expect(error.kind == .connection)
        #expect(connection.isBroken)
        #expect(seconds(since: start) < 4.5)
    }

    /// The server reads nothing while it sleeps, so 32 MB sent after the sleep fill both
    /// sockets' buffers: the send itself must be bounded, not only the wait for results.
    @Test func aSendTheServerDoesNotTakeIsBounded() throws {
        let connection = try ownerConnection()
        connection.answerTimeout = .milliseconds(500)
        let large = String(repeating: "x", count: 32 << 20)
        let start = ContinuousClock.now
        let error = try #require(
            postgresError {
                try connection.pipeline(
                    [PostgresStatement("SELECT pg_sleep(5)"), PostgresStatement("SELECT length($1::text)", [large])],
                    transaction: false)
            })
        #expect(error.kind == .connection)
        #expect(connection.isBroken)
        #expect(seconds(since: start) < 4.5)
    }

    /// Within the limit, nothing changes: a large parameter and a large result both pass.
    @Test func answersWithinTheLimitAreRead() throws {
        let connection = try ownerConnection(preparedStatements: true)
        connection.answerTimeout = .seconds(30)
        let large = String(repeating: "y", count: 8 << 20)
        let results = try connection.pipeline([
            PostgresStatement("SELECT length($1::text) AS n", [large]),
            PostgresStatement("SELECT repeat('z', 8388608) AS z"),
        ])
        #expect(results[0].first?["n"] == String(8 << 20))
        #expect(results[1].first?["z"]?.utf8.count == 8 << 20)
        #expect(try connection.query("SELECT $1::int + 1 AS n", ["41"]).first?["n"] == "42")
        try connection.execute("SELECT 1; SELECT 2")
        #expect(!connection.isBroken)
    }

    @Test func aBorrowersTighterLimitEndsWithItsBorrowing() throws {
        let pool = PostgresPool(
            url: try TestEnvironment.ownerURL(), size: 1, acquireTimeout: .seconds(5), statementTimeoutMs: 10_000,
            answerTimeout: .seconds(15))
        defer { pool.close() }
        #expect(try pool.withConnection { $0.answerTimeout } == .seconds(15))
        let error = postgresError {
            try pool.withConnection(answerLimit: .milliseconds(300)) { connection in
                #expect(connection.answerTimeout == .milliseconds(300))
                return try connection.query("SELECT pg_sleep(5)")
            }
        }
        #expect(error?.kind == .connection)
        #expect(pool.stats.discarded == 1)
        #expect(try pool.withConnection { $0.answerTimeout } == .seconds(15))
    }

    /// Answers of every size over TLS (as production connects: `sslmode=prefer` and a
    /// server with `ssl = on`) are read as they come, not at the limit. The wait reads
    /// first what OpenSSL holds decrypted (a TLS record larger than libpq's free buffer),
    /// since no poll of the socket shows it. PostgreSQL 15, which these tests run, writes
    /// records of 8 kB at most, which libpq's buffer always has room for, so here the test
    /// holds the TLS path whole, not that case: a server that writes larger records
    /// (PostgreSQL 17 sends a large message past its 8 kB buffer) would need it.
    @Test(.timeLimit(.minutes(2))) func answersOverTLSAreReadWithoutWaitingOutTheLimit() throws {
        let server = try TemporaryPostgres()
        defer { server.destroy() }
        try server.enableTLS()
        let connection = try PostgresConnection(url: server.url + "?sslmode=require", preparedStatements: true)
        defer { connection.close() }
        #expect(try connection.query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").first?[0] == "t")
        connection.answerTimeout = .seconds(5)
        // Answers of many sizes, so that records end at every place in libpq's buffer.
        var slowest = 0.0
        for size in stride(from: 1_000, to: 400_000, by: 3_989) {
            let start = ContinuousClock.now
            let length = try connection.query("SELECT repeat('x', $1::int) AS x", [String(size)]).first?["x"]?.utf8.count
            #expect(length == size)
            slowest = max(slowest, seconds(since: start))
        }
        #expect(slowest < 2.5, "the slowest answer took \(slowest) s")
    }

    /// The whole server frozen, as a hung host is: the pool's statement is given up at
    /// the limit, and once the server runs on the pool serves again by itself.
    @Test(.timeLimit(.minutes(2))) func aFrozenServerIsGivenUpAndThePoolRecovers() throws {
        let server = try TemporaryPostgres()
        defer { server.destroy() }
        let pool = PostgresPool(
            url: server.url, size: 2, acquireTimeout: .seconds(1), statementTimeoutMs: 500, answerTimeout: .seconds(3))
        defer { pool.close() }
        #expect(try pool.withConnection { try $0.query("SELECT 1").first?[0] } == "1")
        try server.freeze()
        let start = ContinuousClock.now
        let error = postgresError { try pool.withConnection { try $0.query("SELECT 2") } }
        let waited = seconds(since: start)
        server.thaw()
        #expect(error?.kind == .connection)
        #expect(waited >= 3)
        #expect(waited < 15, "waited \(waited) s")
        try waitUntil("the pool to serve again", within: 30) {
            (try? pool.withConnection { try $0.query("SELECT 3").first?[0] }) == "3"
        }
    }
}
