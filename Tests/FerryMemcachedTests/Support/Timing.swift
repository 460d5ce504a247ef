import Foundation
@testable import FerryMemcached

/// Seconds `body` took, with what it returned or threw.
func timed<R>(_ body: () throws -> R) -> (Result<R, Error>, Double) {
    let start = DispatchTime.now().uptimeNanoseconds
    let result = Result { try body() }
    let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    return (result, elapsed)
}

/// Retries `body` until it returns true or `seconds` passed; returns the last verdict.
/// Sleeps without blocking a thread, so parallel tests keep running.
func eventually(within seconds: Double, every interval: Double = 0.1, _ body: () -> Bool) async throws -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if body() { return true }
        try await Task.sleep(for: .milliseconds(Int(interval * 1000)))
    }
    return body()
}

/// Sleeps without blocking a thread.
func pause(seconds: Double) async throws {
    try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
}

/// `count` pseudo-random bytes (xorshift from a random seed: fast even for megabytes).
func randomBytes(_ count: Int) -> [UInt8] {
    var state = UInt64.random(in: 1...UInt64.max)
    return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
        for index in 0..<count {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            buffer[index] = UInt8(truncatingIfNeeded: state)
        }
        initialized = count
    }
}

/// A key unique to this run, so tests against a shared server never collide.
func uniqueKey(_ prefix: String) -> String {
    "\(prefix):\(UUID().uuidString)"
}

extension MemcachedConfiguration {
    /// Generous timeouts for tests that check correctness, not latency, so a loaded CI
    /// machine cannot turn a slow answer into a spurious `.unavailable`.
    static func relaxed(_ servers: [String]) -> MemcachedConfiguration {
        MemcachedConfiguration(servers: servers, connectTimeoutMs: 1000, pollTimeoutMs: 1000)
    }
}
