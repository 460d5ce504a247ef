import Foundation

/// Runs `operation` in a task of its own and returns what it returns. When the
/// calling task is cancelled first, throws `CancellationError` at once and
/// cancels the operation's task, whose late result is dropped: so a request
/// on a transport that ignores cancellation (a blocking socket, an app's own)
/// still lets continuous mode end a long poll without waiting out its answer.
func abandoningOnCancel<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    let race = AbandonRace<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            race.begin(continuation)
            race.run(
                Task {
                    do { race.finish(.success(try await operation())) } catch { race.finish(.failure(error)) }
                })
        }
    } onCancel: {
        race.cancel()
    }
}

/// The one resumption of ``abandoningOnCancel(_:)``'s caller: by the
/// operation's result or by cancellation, whichever comes first.
///
/// `@unchecked Sendable`: its mutable state is only touched under `lock`
/// (`Synchronization.Mutex` would need macOS 15; FerryKit supports 14).
private final class AbandonRace<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<T, any Error>?
    private var task: Task<Void, Never>?
    private var cancelled = false

    func begin(_ continuation: CheckedContinuation<T, any Error>) {
        let now = locked { () -> Bool in
            if cancelled { return true }
            self.continuation = continuation
            return false
        }
        if now { continuation.resume(throwing: CancellationError()) }
    }

    func run(_ task: Task<Void, Never>) {
        let cancel = locked { () -> Bool in
            if cancelled { return true }
            self.task = task
            return false
        }
        if cancel { task.cancel() }
    }

    func finish(_ result: Result<T, any Error>) {
        let waiting = locked { () -> CheckedContinuation<T, any Error>? in
            defer { continuation = nil; task = nil }
            return continuation
        }
        waiting?.resume(with: result)
    }

    func cancel() {
        let (waiting, running) = locked { () -> (CheckedContinuation<T, any Error>?, Task<Void, Never>?) in
            cancelled = true
            defer { continuation = nil; task = nil }
            return (continuation, task)
        }
        running?.cancel()
        waiting?.resume(throwing: CancellationError())
    }

    private func locked<R>(_ body: () throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}
