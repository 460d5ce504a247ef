import Foundation

// The tests' one way to wait for something to happen: poll a condition until a
// deadline, instead of sleeping for a guess at how long it takes. A guess is either
// too short on a loaded machine (a flaky test) or too long everywhere else.
//
// ``eventually(within:every:_:)`` answers whether the condition came to hold, for a
// test that checks that with `#expect`; ``waitUntil(_:within:every:_:)`` and
// ``waitFor(_:within:every:_:)`` throw ``WaitTimedOut`` naming what did not happen,
// so a test that only needs the condition to go on fails with that message.
// ``eventuallyAsync(within:every:_:)`` and ``waitUntilAsync(_:within:every:_:)`` are
// the forms for async tests.
//
// The synchronous forms block their thread on purpose: an `await`ed sleep resumes on
// Swift's small cooperative pool, which long synchronous suites can starve for many
// seconds, and some of these tests measure time (a 60 s TTL once expired that way).

/// Thrown when a wait's deadline passes before its condition holds.
public struct WaitTimedOut: Error, CustomStringConvertible {
    /// What the test waited for, and for how long.
    public let description: String

    public init(_ what: String, seconds: Double) {
        description = "timed out after \(seconds) s waiting for \(what)"
    }
}

/// Polls `condition` every `interval` seconds until it holds or `seconds` pass;
/// returns whether it held (checked once more at the deadline).
@available(*, noasync, message: "blocks a thread of Swift's small cooperative pool: use eventuallyAsync")
public func eventually(within seconds: Double, every interval: Double = 0.02, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
    while DispatchTime.now().uptimeNanoseconds < deadline {
        if try condition() { return true }
        Thread.sleep(forTimeInterval: interval)
    }
    return try condition()
}

/// Polls `condition` until it holds; throws ``WaitTimedOut`` naming `what` when
/// `seconds` pass first.
@available(*, noasync, message: "blocks a thread of Swift's small cooperative pool: use waitUntilAsync")
public func waitUntil(
    _ what: @autoclosure () -> String, within seconds: Double = 10, every interval: Double = 0.02,
    _ condition: () throws -> Bool
) throws {
    guard try eventually(within: seconds, every: interval, condition) else { throw WaitTimedOut(what(), seconds: seconds) }
}

/// Polls `value` until it returns something and returns that; throws ``WaitTimedOut``
/// naming `what` when `seconds` pass first.
@available(*, noasync, message: "blocks a thread of Swift's small cooperative pool: use waitUntilAsync")
public func waitFor<T>(
    _ what: @autoclosure () -> String, within seconds: Double = 10, every interval: Double = 0.02,
    _ value: () throws -> T?
) throws -> T {
    var found: T?
    _ = try eventually(within: seconds, every: interval) {
        found = try value()
        return found != nil
    }
    guard let found else { throw WaitTimedOut(what(), seconds: seconds) }
    return found
}

/// ``eventually(within:every:_:)`` for a condition that must be awaited (an actor's
/// state, an async client). It sleeps between polls with `Task.sleep`, so it suits
/// tests whose deadlines are generous rather than measured. (Named apart from the
/// blocking form: a closure that awaits nothing would otherwise pick that one.)
public func eventuallyAsync(
    within seconds: Double, every interval: Double = 0.05, _ condition: () async throws -> Bool
) async throws -> Bool {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: .seconds(interval))
    }
    return try await condition()
}

/// ``waitUntil(_:within:every:_:)`` for a condition that must be awaited.
public func waitUntilAsync(
    _ what: @autoclosure () -> String, within seconds: Double = 10, every interval: Double = 0.05,
    _ condition: () async throws -> Bool
) async throws {
    guard try await eventuallyAsync(within: seconds, every: interval, condition) else { throw WaitTimedOut(what(), seconds: seconds) }
}
