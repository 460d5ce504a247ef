// The soak's test process grows with every request, in Foundation's URLSession
// on Linux, not in FerryKit: this program sends GET /healthz over one session
// configured as URLSessionTransport configures its own (ephemeral, no cache),
// and prints its RSS every 1,000 requests.
//
//   swiftc -O bench/soak/urlsession-growth.swift -o /tmp/urlsession-growth
//   /tmp/urlsession-growth http://127.0.0.1:8080/healthz 12000
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

func residentKiB() -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
    return Int(line.split(separator: " ").dropFirst().first { !$0.isEmpty } ?? "") ?? -1
}

guard CommandLine.arguments.count == 3, let url = URL(string: CommandLine.arguments[1]), let count = Int(CommandLine.arguments[2]) else {
    print("usage: urlsession-growth <url> <requests>")
    exit(2)
}
let configuration = URLSessionConfiguration.ephemeral
configuration.urlCache = nil
configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
let session = URLSession(configuration: configuration)
var first = 0
for sent in 1...count {
    _ = try await session.data(from: url)
    if sent == 1_000 { first = residentKiB() }
    if sent % 1_000 == 0 { print("\(sent) requests: RSS \(residentKiB()) KiB") }
}
if count > 1_000 {
    let growth = Double(residentKiB() - first) * 1024 / Double(count - 1_000)
    print(String(format: "growth after the first 1,000 requests: %.0f bytes per request", growth))
}
