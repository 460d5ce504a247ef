import Dispatch
import FerryBase

/// A fixed set of threads running handler jobs in arrival order, so that a
/// blocking handler never stalls socket I/O.
final class WorkerPool: Sendable {
    private struct Queue {
        var jobs: [(@Sendable () -> Void)?] = []
        var head = 0
        var stopped = false
    }

    private let queue = Locked(Queue())
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
    func submit(_ job: @escaping @Sendable () -> Void) {
        let accepted = queue.withLock { q -> Bool in
            guard !q.stopped else { return false }
            q.jobs.append(job)
            return true
        }
        if accepted { ready.signal() }
    }

    /// Lets the threads exit once they are idle; queued jobs are dropped.
    func stop() {
        queue.withLock { q in
            q.stopped = true
            q.jobs.removeAll()
            q.head = 0
        }
        for _ in 0..<threads { ready.signal() }
    }

    private func work() {
        while true {
            ready.wait()
            let next: (@Sendable () -> Void)?? = queue.withLock { q in
                if q.stopped { return .none }
                guard q.head < q.jobs.count else { return .some(nil) }
                let job = q.jobs[q.head]
                q.jobs[q.head] = nil
                q.head += 1
                // Compact now and then so the array does not grow forever.
                if q.head >= 1024 && q.head * 2 >= q.jobs.count {
                    q.jobs.removeFirst(q.head)
                    q.head = 0
                }
                return .some(job)
            }
            switch next {
            case .none: return
            case .some(let job): job?()
            }
        }
    }
}
