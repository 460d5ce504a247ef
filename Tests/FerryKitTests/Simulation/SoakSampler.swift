import Foundation

/// The soak's minute-by-minute record (issue 20, part 3): this process's and
/// the server's resident memory and open descriptors, and the uploads'
/// latency, one JSON line per sample, for bench/soak/plot.py.
final class SoakSampler {
    let path: String
    let serverPID: () -> Int32
    let started = Date()
    private(set) var last = Date.distantPast

    init(path: String, serverPID: @escaping () -> Int32) {
        self.path = path
        self.serverPID = serverPID
        _ = FileManager.default.createFile(atPath: path, contents: nil)
    }

    /// Resident memory in KiB (`VmRSS`) of process `pid` ("self" for this one).
    static func residentKiB(_ pid: String) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    static func openDescriptors(_ pid: String) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
    }

    static func percentile(_ sorted: [Double], _ p: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        return sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
    }

    /// A sample if a minute has passed since the last one.
    func tick(seeds: Int, failures: Int) {
        if Date().timeIntervalSince(last) >= 60 { sample(seeds: seeds, failures: failures) }
    }

    /// One sample now, with the seeds done so far.
    func sample(seeds: Int, failures: Int) {
        last = Date()
        let latencies = UploadLatencies.shared.drain().sorted()
        let server = String(serverPID())
        let line: [String: Any] = [
            "minute": Date().timeIntervalSince(started) / 60,
            "client_rss_kib": Self.residentKiB("self"), "client_fds": Self.openDescriptors("self"),
            "server_rss_kib": Self.residentKiB(server), "server_fds": Self.openDescriptors(server),
            "uploads": latencies.count, "requests": UploadLatencies.shared.requestCount,
            "upload_p50_ms": Self.percentile(latencies, 0.5), "upload_p99_ms": Self.percentile(latencies, 0.99),
            "seeds": seeds, "failures": failures,
        ]
        guard let data = try? JSONSerialization.data(withJSONObject: line, options: [.sortedKeys]),
            let handle = FileHandle(forWritingAtPath: path)
        else { return }
        handle.seekToEndOfFile()
        handle.write(data + Data("\n".utf8))
        try? handle.close()
    }
}
