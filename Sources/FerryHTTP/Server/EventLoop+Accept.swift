// Accepting: new connections, the connection cap, pausing when out of descriptors.

import CEpoll
import Glibc

extension EventLoop {
    /// Accepts what is pending (bounded, for fairness with existing connections).
    func acceptConnections() {
        // shuttingDown: the listener may be shut down before this loop has read its
        // .shutdown message (its accept would fail with EINVAL).
        guard !stopping, !shared.shuttingDown.load(ordering: .relaxed) else { return }
        for _ in 0..<64 {
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    shared.descriptors.accept(
                        shared.listenerFD, $0, &length, flags: Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue))
                }
            }
            if fd < 0 {
                switch errno {
                case EAGAIN, EWOULDBLOCK:
                    return
                case EINTR, ECONNABORTED, EPROTO, EPERM:
                    continue
                case EINVAL where shared.shuttingDown.load(ordering: .relaxed):
                    return  // the listener was shut down while this batch ran: SIGTERM, not a fault
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    if shared.descriptors.shouldWarn(now: now) {
                        shared.logger.error("accept: out of file descriptors; refusing new connections until some close")
                    }
                    guard shared.descriptors.shed(listener: shared.listenerFD) else {
                        pauseAccepting()
                        return
                    }
                    continue
                default:
                    shared.logger.error("accept failed: errno \(errno)")
                    return
                }
            }
            Socket.setNoDelay(fd)
            let previouslyOpen = shared.openConnections.wrappingAdd(1, ordering: .relaxed).oldValue
            let connection = register(fd: fd, remoteAddress: Socket.address(of: storage))
            guard let connection else { continue }
            if previouslyOpen >= limits.maxConnections {
                reject(connection)
            }
            drive(connection)
        }
    }

    /// Out of descriptors with no spare to refuse with: stops watching the
    /// listener for a moment, rather than wake for it in a busy loop.
    private func pauseAccepting() {
        guard acceptPausedUntil == nil else { return }
        var event = epoll_event()
        epoll_ctl(epollFD, EPOLL_CTL_DEL, shared.listenerFD, &event)
        acceptPausedUntil = now + 0.1
    }

    /// Watches the listener again once a pause is over.
    func resumeAcceptingIfDue() {
        guard let until = acceptPausedUntil, now >= until, !stopping else { return }
        do {
            try watch(shared.listenerFD, events: EPOLLIN.rawValue | EPOLLEXCLUSIVE.rawValue)
            acceptPausedUntil = nil
        } catch {
            acceptPausedUntil = now + 1
            if shared.descriptors.shouldWarn(now: now) { shared.logger.error("cannot watch the listener again: \(error)") }
        }
    }

    private func register(fd: Int32, remoteAddress: (text: String, port: Int)) -> Connection? {
        nextSerial &+= 1
        let connection = Connection(
            fd: fd, serial: nextSerial, remoteAddress: "\(remoteAddress.text):\(remoteAddress.port)",
            limits: limits, now: now)
        if Int(fd) >= connections.count {
            connections.append(contentsOf: repeatElement(nil, count: Int(fd) + 1 - connections.count))
        }
        connections[Int(fd)] = connection
        liveConnections += 1
        var event = epoll_event()
        // Write interest is added only while a write is blocked (see `watchWrites`): a
        // socket watched for EPOLLOUT all the time wakes the loop after every response.
        event.events = EventLoop.readEvents
        event.data.fd = fd
        guard epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event) == 0 else {
            shared.logger.error("epoll_ctl(ADD) failed: errno \(errno)")
            close(connection)
            return nil
        }
        return connection
    }

    /// Over the connection cap: answer 503 and close.
    private func reject(_ connection: Connection) {
        connection.current = Exchange(
            method: "-", path: "-", requestID: requestIDs.next(), startedAt: now, isHEAD: false, http10: false)
        connection.state.refusing(close: true)
        finish(
            connection,
            shared.configuration.refusal(
                HTTPError(
                    status: 503, reason: .tooManyConnections, detail: "Too many open connections; retry later.",
                    headers: HTTPHeaders([("Retry-After", "1")]))))
    }
}
