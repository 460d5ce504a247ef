import CEpoll
import Glibc

extension EventLoop {
    /// The periodic pass over this loop's connections that enforces every time limit.
    func sweep() {
        for case let connection? in connections {
            if let stalled = connection.writeStalledSince, now - stalled >= limits.writeTimeoutSeconds {
                close(connection)
                continue
            }
            switch connection.phase {
            case .lingering:
                if now >= connection.lingerDeadline { close(connection) }
            case .reading where !connection.hasPendingOutput && !connection.closeAfterWrite:
                if connection.parser.hasPartialRequest {
                    if connection.parser.isReadingHead {
                        if let started = connection.headStartedAt, now - started >= limits.headerTimeoutSeconds {
                            timeOut(connection, "The request head did not arrive in time.")
                        }
                    } else if now - connection.lastReadAt >= limits.bodyTimeoutSeconds {
                        timeOut(connection, "The request body stalled.")
                    }
                } else if now - connection.idleSince >= limits.idleTimeoutSeconds || stopping {
                    close(connection)
                }
            default:
                break
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
        where connection.phase == .reading && !connection.parser.hasPartialRequest && !connection.hasPendingOutput {
            close(connection)
        }
    }
}
