import Synchronization

/// A thread-safe counter that only goes up, for features to bump on hot paths
/// (one relaxed atomic add; no lock).
public final class MetricCounter: Sendable {
    private let count = Atomic<Int>(0)

    public init() {}

    /// Adds `amount` (default 1).
    public func increment(by amount: Int = 1) {
        count.add(amount, ordering: .relaxed)
    }

    public var value: Int { count.load(ordering: .relaxed) }
}
