import Foundation
import FerryTestSupport
import Testing

/// deploy/ferry.service must pass `systemd-analyze verify` without a single
/// complaint (verify exits 0 even for unknown keys, so its output must be empty too).
@Suite struct SystemdUnitTests {
    @Test func unitVerifiesCleanly() throws {
        let root = TestEnvironment.repositoryRoot
        let unit = try String(contentsOf: root.appendingPathComponent("deploy/ferry.service"), encoding: .utf8)
        #expect(unit.contains("ExecStart=/usr/local/bin/ferry serve --config /etc/ferry/config.json"))
        for option in [
            "NoNewPrivileges=yes", "ProtectSystem=strict", "ProtectHome=yes", "PrivateTmp=yes",
            "Restart=on-failure", "SystemCallFilter=@system-service", "CapabilityBoundingSet=\n",
        ] {
            #expect(unit.contains(option), "missing \(option)")
        }
        // verify insists that ExecStart's binary exists: point it at the built one.
        let built =
            ["debug", "release"].map { root.appendingPathComponent(".build/\($0)/ferry").path }
            .first { FileManager.default.isExecutableFile(atPath: $0) } ?? "/bin/true"
        let directory = try Subprocess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let copy = directory.appendingPathComponent("ferry.service")
        try unit.replacingOccurrences(of: "ExecStart=/usr/local/bin/ferry", with: "ExecStart=\(built)")
            .write(to: copy, atomically: true, encoding: .utf8)
        let result = try Subprocess.run(["systemd-analyze", "verify", copy.path])
        #expect(result.status == 0, "systemd-analyze verify failed (is the systemd package installed?):\n\(result.output)")
        #expect(result.output.isEmpty, "systemd-analyze verify complained:\n\(result.output)")
    }

    @Test func verifyCatchesABadUnit() throws {
        let directory = try Subprocess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let copy = directory.appendingPathComponent("bad.service")
        try "[Service]\nExecStart=/bin/true\nRestart=sometimes\n".write(to: copy, atomically: true, encoding: .utf8)
        let result = try Subprocess.run(["systemd-analyze", "verify", copy.path])
        #expect(!result.output.isEmpty, "verify said nothing about a bad Restart= value")
    }
}
