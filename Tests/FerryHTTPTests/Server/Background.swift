import Dispatch

/// Runs a blocking closure on a background thread and waits for its result later.
final class Background<T: Sendable>: @unchecked Sendable {
    // Guarded by `done`: `value` is written before the signal and read after the wait.
    private var value: T?
    private let done = DispatchSemaphore(value: 0)

    init(_ body: @escaping @Sendable () -> T) {
        DispatchQueue.global().async {
            self.value = body()
            self.done.signal()
        }
    }

    func wait(seconds: Double = 10) -> T? {
        guard done.wait(timeout: .now() + seconds) == .success else { return nil }
        return value
    }
}
