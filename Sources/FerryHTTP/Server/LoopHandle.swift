import CEpoll
import Dispatch
import Glibc
import FerryBase
import Synchronization

/// Messages other threads send to an I/O loop.
enum LoopMessage: Sendable {
    /// A worker finished a handler for connection `fd` (checked against `serial`).
    case response(fd: Int32, serial: UInt64, HTTPResponse)
    /// A piece of a streamed body; the loop acknowledges through `channel` once sent.
    case segment(fd: Int32, serial: UInt64, [UInt8], StreamChannel)
    /// A streamed body ended; `failed` when its producer threw.
    case streamEnd(fd: Int32, serial: UInt64, failed: Bool, bytes: Int)
    /// Begin graceful shutdown.
    case shutdown
}

/// Back-pressure between a body producer on a worker and the loop writing it.
final class StreamChannel: Sendable {
    let acknowledged = DispatchSemaphore(value: 0)
    let cancelled = Atomic<Bool>(false)

    /// Wakes the producer; `cancel` when the client is gone.
    func release(cancel: Bool) {
        if cancel { cancelled.store(true, ordering: .relaxed) }
        acknowledged.signal()
    }
}

/// The thread-safe side of an I/O loop: an inbox and the eventfd that wakes it.
final class LoopHandle: Sendable {
    private struct Inbox {
        var messages: [LoopMessage] = []
        var closed = false
    }

    let eventFD: Int32
    let index: Int
    private let inbox = Locked(Inbox())

    init(index: Int) throws {
        let fd = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard fd >= 0 else { throw Socket.Failure(call: "eventfd", code: errno) }
        eventFD = fd
        self.index = index
    }

    /// Queues a message and wakes the loop; false once the loop has ended.
    @discardableResult
    func post(_ message: LoopMessage) -> Bool {
        let (accepted, wake) = inbox.withLock { box -> (Bool, Bool) in
            guard !box.closed else { return (false, false) }
            box.messages.append(message)
            // Only the first message of a batch needs a wake-up.
            return (true, box.messages.count == 1)
        }
        if wake {
            var one: UInt64 = 1
            _ = write(eventFD, &one, 8)
        }
        return accepted
    }

    /// Everything queued so far, in order. The loop reads the eventfd first.
    func drain() -> [LoopMessage] {
        inbox.withLock { box in
            let messages = box.messages
            box.messages = []
            return messages
        }
    }

    /// Stops accepting messages and returns the leftovers; then closes the eventfd.
    func close() -> [LoopMessage] {
        let leftovers = inbox.withLock { box in
            box.closed = true
            let messages = box.messages
            box.messages = []
            return messages
        }
        Glibc.close(eventFD)
        return leftovers
    }
}
