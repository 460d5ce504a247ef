import Foundation
@testable import FerryMemcached

/// Seconds `body` took, with what it returned or threw.
func timed<R>(_ body: () throws -> R) -> (Result<R, Error>, Double) {
    let start = DispatchTime.now().uptimeNanoseconds
    let result = Result { try body() }
    let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    return (result, elapsed)
}

/// Sleeps, blocking the thread: an `await`ed sleep resumes on Swift's small
/// cooperative pool, which long synchronous suites can starve for many seconds,
/// and these tests measure time (a 60 s TTL once expired that way). Only for a
/// sleep that is the point of a test; to wait for something, use `eventually`.
func pause(seconds: Double) {
    Thread.sleep(forTimeInterval: seconds)
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
