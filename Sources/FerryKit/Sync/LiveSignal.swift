import Foundation

/// What wakes continuous mode's loop: posted from any thread (the store's
/// writer queue after a commit, a network monitor, the app, the long poll's
/// task), waited for by the loop alone.
///
/// `@unchecked Sendable`: its mutable state is only touched under `lock`
/// (`Synchronization.Mutex` would need macOS 15; FerryKit supports 14).
final class LiveSignal: @unchecked Sendable {
    enum Wake: Sendable, Hashable {
        /// The app wrote a synced table (an operation entered the outbox).
        case wrote
        /// The network came back.
        case network
        /// The app called `sync()`.
        case sync
        /// The app unsubscribed: the next eviction may be due sooner.
        case unsubscribed
        /// The long poll's task ended.
        case pollEnded
        /// `stop()`.
        case stop
    }

    private let lock = NSLock()
    private var posted: Set<Wake> = []
    private var waiter: CheckedContinuation<Set<Wake>, Never>?

    func post(_ wake: Wake) {
        let resumed: (CheckedContinuation<Set<Wake>, Never>, Set<Wake>)? = locked {
            posted.insert(wake)
            guard let waiter else { return nil }
            self.waiter = nil
            defer { posted = [] }
            return (waiter, posted)
        }
        if let (waiter, wakes) = resumed { waiter.resume(returning: wakes) }
    }

    /// Forgets what was posted (a new start).
    func reset() { locked { posted = [] } }

    /// Forgets one kind of wake, if posted.
    func discard(_ wake: Wake) { _ = locked { posted.remove(wake) } }

    /// What was posted since the last call, waiting up to `seconds` (nil: as
    /// long as it takes) for something; empty when the time came first or the
    /// task was cancelled. One waiter at a time: the loop.
    func wait(seconds: TimeInterval?) async -> Set<Wake> {
        if let ready = take(), !ready.isEmpty { return ready }
        guard let seconds else { return await next() }
        guard seconds > 0 else { return [] }
        return await withTaskGroup(of: Set<Wake>?.self) { group in
            group.addTask { await self.next() }
            group.addTask {
                // Not a poll: the deadline of the wait, which a post ends early.
                try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
                return nil
            }
            // The first to end ends the other; a post that raced the deadline is kept.
            var wakes: Set<Wake> = []
            for await ended in group {
                group.cancelAll()
                if let ended { wakes.formUnion(ended) }
            }
            return wakes
        }
    }

    private func take() -> Set<Wake>? {
        locked {
            defer { posted = [] }
            return posted
        }
    }

    /// The next post; empty if the task is cancelled first.
    private func next() async -> Set<Wake> {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready: Set<Wake>? = locked {
                    if !posted.isEmpty || Task.isCancelled {
                        defer { posted = [] }
                        return posted
                    }
                    waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiting = locked { () -> CheckedContinuation<Set<Wake>, Never>? in
                defer { waiter = nil }
                return waiter
            }
            waiting?.resume(returning: [])
        }
    }

    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}
