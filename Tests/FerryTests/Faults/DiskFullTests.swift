import FerryHTTPTestSupport
import FerryPostgres
import FerryTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 21, faults: the disk under PostgreSQL fills up. The cluster's data
/// lives on its own small tmpfs; a file fills it to the last byte. Writes that
/// need space answer 503 `storage_full` with Retry-After, reads go on, and
/// once the file is deleted the same writes (same keys) succeed.
@Suite struct DiskFullTests {
    @Test(
        .enabled(
            if: TemporaryPostgres.canMountDisk,
            "skipped: mounting a tmpfs under PostgreSQL needs root and a system that allows mounts (CI runs as root)"))
    func writesAnswerStorageFullAndReadsGoOn() throws {
        let isolated = try PrivateClusterServer(diskMegabytes: 160)
        defer { isolated.stop() }
        let server = isolated.server
        let disk = try #require(isolated.cluster.disk)
        let user = try server.user("dora")
        let client = TestHTTPClient(port: server.port, timeout: 10)
        let auth = ("Authorization", "Bearer \(user.token)")
        func call(_ method: String, _ path: String, key: String? = nil, json: Any? = nil) throws -> TestHTTPClient.Response {
            try client.request(method, path, headers: [auth] + (key.map { [("Idempotency-Key", $0)] } ?? []), json: json)
        }
        let set = try #require(try call("POST", "/v1/study_sets", json: ["title": "disk"]).object["id"] as? String)
        #expect(try call("POST", "/v1/terms", json: Self.terms(set, 20)).status == 201)

        let filler = disk + "/filler"
        let filled = try Self.fill(filler)
        defer { unlink(filler) }
        // Each write needs new pages: 40 terms of 1,500 random characters (below the TOAST threshold).
        let writes = (0..<3).map { ("disk-\($0)", Self.terms(set, 40)) }
        for (key, body) in writes {
            let refused = try call("POST", "/v1/terms", key: key, json: body)
            #expect(refused.status == 503, "\(refused.status) \(refused.text.prefix(300))")
            #expect(refused.object["code"] as? String == "storage_full")
            #expect(refused.header("Retry-After") != nil)
        }
        var reads = 0
        for _ in 0..<10 {
            for path in ["/v1/terms?set_id=\(set)", "/v1/study_sets/\(set)", "/v1/changes", "/v1/auth/me"] {
                let read = try call("GET", path)
                #expect(read.status == 200, "GET \(path) on a full disk: \(read.status) \(read.text.prefix(200))")
                reads += 1
            }
        }
        #expect((try call("GET", "/v1/terms?set_id=\(set)").object["data"] as? [Any])?.count == 20)

        unlink(filler)
        for (key, body) in writes {
            let retried = try call("POST", "/v1/terms", key: key, json: body)
            #expect(retried.status == 201, "after freeing space: \(retried.status) \(retried.text.prefix(300))")
        }
        #expect((try call("GET", "/v1/terms?set_id=\(set)&limit=1000").object["data"] as? [Any])?.count == 140)
        #expect(try call("GET", "/readyz").status == 200)
        print(
            "fault disk-full: a \(filled / 1_048_576) MiB file filled the 160 MiB tmpfs; \(writes.count) writes answered 503 storage_full, \(reads) reads 200; the same writes 201 once it was deleted"
        )
    }

    /// `count` new terms for `set`, each with 1,500 characters that barely compress.
    static func terms(_ set: String, _ count: Int) -> [[String: Any]] {
        (0..<count).map { _ in
            let definition = (0..<94).map { _ in String(UInt64.random(in: 0...UInt64.max), radix: 16) }.joined().prefix(1500)
            return ["set_id": set, "word": UUID().uuidString, "definition": String(definition)]
        }
    }

    /// Writes zeros to `path` until the file system is full; returns the bytes written.
    static func fill(_ path: String) throws -> Int {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { throw TestError("open \(path): errno \(errno)") }
        defer { close(fd) }
        var total = 0
        for chunk in [1 << 20, 4096, 512] {
            let zeros = [UInt8](repeating: 0, count: chunk)
            while true {
                let n = zeros.withUnsafeBytes { write(fd, $0.baseAddress, chunk) }
                if n <= 0 { break }
                total += n
            }
            guard errno == ENOSPC else { throw TestError("filling \(path): errno \(errno)") }
        }
        return total
    }
}
