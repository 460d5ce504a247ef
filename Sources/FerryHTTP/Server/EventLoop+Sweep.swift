// The sweep: the periodic pass over a loop's connections that enforces every time
// limit, and the start of a shutdown's drain.

import CEpoll

extension EventLoop {
    /// The periodic pass over this loop's connections that enforces every time limit.
    func sweep() {
        for case let connection? in connections {
            let action = connection.state.timer(
                now: now, stopping: stopping, progress: connection.progress, outputPending: connection.hasPendingOutput)
            switch action {
            case .none: if connection.parking != nil { sweepParked(connection) }
            case .close: close(connection)
            case .timeOut(let detail): timeOut(connection, detail)
            }
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
    }
}
