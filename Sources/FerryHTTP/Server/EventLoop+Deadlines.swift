// Deadlines: every time limit of a loop's connections (header, body, idle, write,
// linger, a parked exchange's deadline and its stream's heartbeat) enforced as it
// falls due, from one DeadlineQueue, and the start of a shutdown's drain. A tick
// looks only at the connections whose deadline has come, so ten thousand parked
// long polls cost nothing while nothing is due.

import CEpoll

extension EventLoop {
    /// When the connection next needs the loop without any I/O: the earliest of
    /// its state's limits (``ConnectionState/deadline(stopping:progress:outputPending:)``)
    /// and its parked exchange's (``parkedDeadline(_:)``); nil when nothing is timed.
    func deadline(of connection: Connection) -> Double? {
        let limit = connection.state.deadline(
            stopping: stopping, progress: connection.progress, outputPending: connection.hasPendingOutput)
        guard let parked = parkedDeadline(connection) else { return limit }
        return min(limit ?? parked, parked)
    }

    /// Keeps the connection's entry no later than its deadline. A deadline
    /// that moved later leaves the entry where it is: when it falls due, the
    /// connection is looked at and put back at its real deadline. So a busy
    /// keep-alive connection, whose idle deadline moves with every request,
    /// costs a comparison per request, not a heap operation.
    func reschedule(_ connection: Connection) {
        guard self.connection(connection.fd) === connection, let due = deadline(of: connection) else { return }
        if let scheduled = deadlines.deadline(of: connection.fd), scheduled <= due { return }
        deadlines.schedule(connection.fd, at: due)
    }

    /// The loop's wait before the next thing due: a deadline, the end of an
    /// accept pause, the end of shutdown's grace; -1 (until I/O) when none is.
    func waitMillis() -> Int32 {
        var next = deadlines.earliest ?? .infinity
        if let until = acceptPausedUntil { next = min(next, until) }
        if stopping { next = min(next, graceDeadline) }
        guard next.isFinite else { return -1 }
        // Rounded up: waking a millisecond early would find nothing due and wait again.
        return Int32(max(0, min(86_400_000, ((next - now) * 1000).rounded(.up))))
    }

    /// Enforces the limits of every connection whose deadline has come.
    func expireDue() {
        // Popped first, then handled: a connection rescheduled at `now` is
        // handled by the next tick, after I/O has had its turn.
        var due: [Int32] = []
        while let fd = deadlines.popDue(now: now) { due.append(fd) }
        for fd in due {
            guard let connection = connection(fd) else { continue }
            switch connection.state.timer(
                now: now, stopping: stopping, progress: connection.progress, outputPending: connection.hasPendingOutput)
            {
            case .none: if connection.parking != nil { expireParked(connection) }
            case .close: close(connection)
            case .timeOut(let detail): timeOut(connection, detail)
            }
            reschedule(connection)
        }
    }

    private func timeOut(_ connection: Connection, _ detail: String) {
        refuse(connection, HTTPError(status: 408, reason: .requestTimeout, detail: detail, closeConnection: true))
        drive(connection)
    }

    /// Stops accepting on this loop and closes idle connections; busy ones
    /// finish (with `Connection: close`) until the grace period ends.
    func beginShutdown() {
        guard !stopping else { return }
        stopping = true
        graceDeadline = now + limits.shutdownGraceSeconds
        var event = epoll_event()
        epoll_ctl(epollFD, EPOLL_CTL_DEL, shared.listenerFD, &event)
        for case let connection? in connections
        where connection.state.closesAtShutdown(progress: connection.progress, outputPending: connection.hasPendingOutput) {
            close(connection)
        }
        resumeParkedForShutdown()
        // Stopping shortens some limits (an idle connection closes at once).
        for case let connection? in connections { reschedule(connection) }
    }
}
