// The hand-off between the I/O loops and the worker threads that run handlers:
// `WorkerPool` runs jobs in arrival order; `LoopHandle` is a loop's thread-safe
// inbox with the eventfd that wakes it, through which a worker posts a
// `LoopMessage` (a response, a streamed segment, the end of a stream) back;
// `StreamChannel` holds a streaming producer until its segment is written.

import CEpoll
import Dispatch
import FerryBase
import Glibc
import Synchronization

/// A fixed set of threads running handler jobs in arrival order, so that a
/// blocking handler never stalls socket I/O. Jobs submitted as urgent (the
/// server's ``HTTPServerConfiguration/urgent`` test, say a request whose
/// credentials the app has verified already) go first, but never more than
/// ``urgentInARow`` in a row while others wait, so neither kind starves: a
/// flood of requests that are refused anyway cannot queue in front of the
/// signed-in ones.
final class WorkerPool: Sendable {
    /// One FIFO of jobs.
    private struct FIFO {
        var jobs: [(@Sendable () -> Void)?] = []
        var head = 0
        var isEmpty: Bool { head >= jobs.count }

        mutating func take() -> (@Sendable () -> Void)? {
            let job = jobs[head]
            jobs[head] = nil
            head += 1
            // Compact now and then so the array does not grow forever.
            if head >= 1024 && head * 2 >= jobs.count {
                jobs.removeFirst(head)
                head = 0
            }
            return job
        }

        mutating func clear() {
            jobs.removeAll()
            head = 0
        }
    }

    private struct Queue {
        var normal = FIFO()
        var urgent = FIFO()
        /// Urgent jobs taken since the last normal one.
        var urgentTaken = 0
        var stopped = false
    }

    /// The most urgent jobs taken in a row while normal ones wait.
    static let urgentInARow = 8

    private let queue = Locked(Queue())
    /// Jobs waiting for a worker (read without the lock: see ``isBacklogged``).
    private let waiting = Atomic<Int>(0)
    /// Counts queued jobs (and stop tokens); workers sleep on it.
    private let ready = DispatchSemaphore(value: 0)
    private let threads: Int

    init(threads: Int, name: String) {
        self.threads = threads
        for i in 0..<threads {
            ThreadSpawn.start(name: "\(name)-\(i)") { [self] in self.work() }
        }
    }

    /// Queues a job; dropped when the pool has stopped.
    func submit(urgent: Bool = false, _ job: @escaping @Sendable () -> Void) {
        let accepted = queue.withLock { q -> Bool in
            guard !q.stopped else { return false }
            if urgent { q.urgent.jobs.append(job) } else { q.normal.jobs.append(job) }
            return true
        }
        if accepted {
            waiting.add(1, ordering: .relaxed)
            ready.signal()
        }
    }

    /// Whether jobs wait for a worker: only then does being urgent matter, so
    /// the loop asks the (costlier) urgency test only then.
    var isBacklogged: Bool { waiting.load(ordering: .relaxed) > 0 }

    /// Lets the threads exit once they are idle; queued jobs are dropped.
    func stop() {
        queue.withLock { q in
            q.stopped = true
            q.normal.clear()
            q.urgent.clear()
        }
        for _ in 0..<threads { ready.signal() }
    }

    private func work() {
        while true {
            ready.wait()
            let next: (@Sendable () -> Void)?? = queue.withLock { q in
                if q.stopped { return .none }
                if !q.urgent.isEmpty && (q.normal.isEmpty || q.urgentTaken < Self.urgentInARow) {
                    q.urgentTaken += 1
                    return .some(q.urgent.take())
                }
                guard !q.normal.isEmpty else { return .some(nil) }
                q.urgentTaken = 0
                return .some(q.normal.take())
            }
            switch next {
            case .none: return
            case .some(let job):
                if job != nil { waiting.subtract(1, ordering: .relaxed) }
                job?()
            }
        }
    }
}

/// Messages other threads send to an I/O loop.
enum LoopMessage: Sendable {
    /// A worker finished a handler for connection `fd` (checked against `serial`).
    case response(fd: Int32, serial: UInt64, HTTPResponse)
    /// A piece of a streamed body; the loop acknowledges through `channel` once sent.
    case segment(fd: Int32, serial: UInt64, [UInt8], StreamChannel)
    /// A streamed body ended; `failed` when its producer threw.
    case streamEnd(fd: Int32, serial: UInt64, failed: Bool, bytes: Int)
    /// A parked exchange's ticket was woken (Core/ParkingTicket.swift).
    case wake(fd: Int32, serial: UInt64, ParkingTicket)
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

extension LoopHandle: ExchangeLoop {
    /// A ticket's wake, posted to the loop like a worker's answer.
    func wake(fd: Int32, serial: UInt64, _ ticket: ParkingTicket) { post(.wake(fd: fd, serial: serial, ticket)) }
}
