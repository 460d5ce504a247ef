import Foundation
import Testing
import FerryTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Running out of file descriptors (EMFILE) must not stop the server serving
/// the connections it already has, and it recovers once descriptors free up.
/// `ferry serve` runs as a subprocess under `ulimit -n 64`.
@Suite struct FileDescriptorExhaustionTests {
    @Test func existingConnectionsKeepBeingServed() throws {
        let database = try ScratchDatabase()
        defer { database.drop() }
        let port = FreePort.next()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", "ulimit -n 64 && exec \"$0\" serve", try FerryProcess.binary.path]
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("FERRY_") }
        env["FERRY_DATABASE_URL"] = database.appURL
        env["FERRY_DATABASE_POOL_SIZE"] = "2"
        env["FERRY_LISTEN_PORT"] = String(port)
        env["FERRY_LISTEN_WORKER_THREADS"] = "2"
        env["FERRY_LOGGING_LEVEL"] = "error"
        process.environment = env
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate(); process.waitUntilExit() } }

        let first = TestHTTPClient(port: port, timeout: 5)
        var up = false
        for _ in 0..<100 where !up {
            up = (try? first.request("GET", "/healthz"))?.status == 200
            if !up { usleep(100_000) }
        }
        #expect(up)

        // Open far more connections than the descriptor limit allows.
        var flood: [TestHTTPClient] = []
        for _ in 0..<120 {
            let client = TestHTTPClient(port: port, timeout: 0.1)
            try? client.send(Array("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
            flood.append(client)
        }
        usleep(300_000)
        // The connection that existed before is still served, repeatedly.
        for _ in 0..<5 {
            #expect(try first.request("GET", "/healthz").status == 200)
        }
        #expect(process.isRunning)
        // Some of the flood was answered; the rest was refused by closing, not left hanging.
        var answered = 0, refused = 0
        for client in flood {
            if (try? client.readResponse())?.status == 200 { answered += 1 } else { refused += 1 }
        }
        #expect(answered > 0 && refused > 0, "answered \(answered), refused \(refused)")
        // Once the flood goes away, new connections are accepted again.
        for client in flood { client.close() }
        flood.removeAll()
        var recovered = false
        for _ in 0..<50 where !recovered {
            recovered = (try? TestHTTPClient(port: port, timeout: 1).request("GET", "/healthz"))?.status == 200
            if !recovered { usleep(100_000) }
        }
        #expect(recovered)
    }
}
