import FerryHTTPTestSupport
import Foundation
import Testing
import FerryTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `ferry serve` as a real process: it serves, reloads its tables on SIGHUP,
/// and exits 0 on SIGTERM.
@Suite struct ServeCommandTests {
    /// Starts `ferry serve` on a free port over `database` with `settings` added to a
    /// clean FERRY_* environment, and waits until /healthz answers.
    private func serve(_ database: ScratchDatabase, _ settings: [String: String], stdout: Any = FileHandle.nullDevice)
        throws -> (Process, TestHTTPClient)
    {
        let port = FreePort.next()
        let process = Process()
        process.executableURL = try FerryProcess.binary
        process.arguments = ["serve"]
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("FERRY_") }
        env["FERRY_DATABASE_URL"] = database.appURL
        env["FERRY_LISTEN_PORT"] = String(port)
        env.merge(settings) { _, new in new }
        process.environment = env
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        try process.run()
        let client = TestHTTPClient(port: port, timeout: 5)
        var health: TestHTTPClient.Response?
        _ = eventually(within: 10, every: 0.1) {
            health = try? client.request("GET", "/healthz")
            return health != nil
        }
        #expect(health?.status == 200)
        return (process, client)
    }

    /// Served as the owner, Row Level Security holds no one: it started, logged the
    /// findings, and served every user every row. It refuses now, naming the fix.
    @Test func servingAsTheTablesOwnerIsRefused() throws {
        let database = try ScratchDatabase(prefix: "ferry_serve", app: .study)
        defer { database.drop() }
        let process = Process()
        process.executableURL = try FerryProcess.binary
        process.arguments = ["serve"]
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("FERRY_") }
        env["FERRY_DATABASE_URL"] = database.ownerURL
        env["FERRY_LISTEN_PORT"] = String(FreePort.next())
        process.environment = env
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // A server that does start would keep the pipe open: stopped, so the test fails rather than hangs.
        let guardStop = DispatchWorkItem { if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + 120, execute: guardStop)
        defer { guardStop.cancel() }
        let log = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 1, "\(log)")
        #expect(log.contains("cannot start: the serve role (database.url's) is not held by Row Level Security"), "\(log)")
        #expect(!log.contains("listening on"), "\(log)")
    }

    @Test func reloadsOnSIGHUPAndStopsOnSIGTERM() throws {
        let database = try ScratchDatabase()
        defer { database.drop() }
        let (process, client) = try serve(database, ["FERRY_LOGGING_LEVEL": "warning"])
        defer { if process.isRunning { process.terminate() } }

        let owner = try TestServerless.owner(database)
        defer { owner.close() }

        let token = try TestServerless.token(owner, user: "kim")
        let auth = [("Authorization", "Bearer \(token)")]
        let before = try client.request("GET", "/v1", headers: auth).text
        #expect(!before.contains("\"notes\""))

        _ = try owner.query("CREATE TABLE app.notes (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), body text NOT NULL DEFAULT '')")
        _ = try owner.query("SELECT ferry.enable_sync('app.notes')")
        _ = try owner.query("GRANT SELECT, INSERT, UPDATE ON app.notes TO ferry_app")
        kill(process.processIdentifier, SIGHUP)
        var after = ""
        _ = try eventually(within: 5, every: 0.1) {
            after = try client.request("GET", "/v1", headers: auth).text
            return after.contains("\"notes\"")
        }
        #expect(after.contains("\"name\":\"notes\""))

        client.close()
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0)
    }

    /// A SIGHUP that finds nothing changed still says it arrived: the operator who sent it
    /// sees the tables were read again.
    @Test func aSIGHUPThatChangesNothingSaysSo() throws {
        let database = try ScratchDatabase()
        defer { database.drop() }
        let output = Pipe()
        let (process, _) = try serve(database, ["FERRY_LOGGING_LEVEL": "info"], stdout: output)
        defer { if process.isRunning { process.terminate() } }
        let reader = output.fileHandleForReading.fileDescriptor
        _ = fcntl(reader, F_SETFL, fcntl(reader, F_GETFL) | O_NONBLOCK)
        var text = ""
        func saw(_ line: String) -> Bool {
            eventually(within: 15, every: 0.1) {
                var chunk = [UInt8](repeating: 0, count: 4096)
                while true {
                    let count = read(reader, &chunk, chunk.count)
                    guard count > 0 else { break }
                    text += String(decoding: chunk[0..<count], as: UTF8.self)
                }
                return text.contains(line)
            }
        }
        // The handler is installed once the server says so: a SIGHUP before is ignored.
        #expect(saw("signals: SIGTERM or SIGINT stops"), "\(text)")
        kill(process.processIdentifier, SIGHUP)
        #expect(saw("reload: the tables are as they were"), "\(text)")
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
    }

    /// Both log formats go through the process's log buffer: a request's line reaches
    /// standard output, whole, by the time SIGTERM's shutdown has finished.
    @Test(arguments: ["text", "json"]) func requestLinesReachStandardOutput(format: String) throws {
        let database = try ScratchDatabase()
        defer { database.drop() }
        let output = Pipe()
        let (process, client) = try serve(database, ["FERRY_LOGGING_FORMAT": format], stdout: output)
        defer { if process.isRunning { process.terminate() } }
        let missing = try client.request("GET", "/v1/terms/not-a-row", headers: [("X-Request-Id", "log-line-\(format)")])
        #expect(missing.status == 401)
        client.close()
        kill(process.processIdentifier, SIGTERM)
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)

        let lines = text.split(separator: "\n").filter { $0.contains("log-line-\(format)") }
        #expect(lines.count == 1, "\(text)")
        let line = try #require(lines.first)
        if format == "json" {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(object["message"] as? String == "request")
            #expect(object["route"] as? String == "/v1/:resource/:id")
            #expect(object["status"] as? Int == 401)
        } else {
            #expect(line.contains(" info ferry: request "))
            #expect(line.contains("route=/v1/:resource/:id"))
            #expect(line.contains("status=401"))
        }
    }

    @Test func unreachableDatabaseFailsAtStart() throws {
        let outcome = try FerryProcess.run(
            ["serve"],
            environment: [
                "FERRY_DATABASE_URL": "postgresql://ferry_app@127.0.0.1:1/ferry", "FERRY_LISTEN_PORT": String(FreePort.next()),
            ])
        #expect(outcome.status != 0)
        #expect((outcome.stdout + outcome.stderr).contains("cannot start"))
    }
}
