// One I/O thread's epoll loop: waking, and driving each connection's socket —
// reading into the parser, writing the answer, lingering before a close. What a
// connection should do next is decided by its `ConnectionState` (Connection.swift);
// this file performs it on the socket. `drive` stays whole, so a connection's turn
// reads top to bottom. Beside it: accepting (+Accept), exchanges from a parsed
// request to the answer on the wire (+Exchange), parked exchanges (+Parking), and
// the deadlines that enforce time limits as they fall due, and shutdown's drain
// (+Deadlines, over DeadlineQueue.swift); request ids come from RequestIDGenerator.swift.

import CEpoll
import Glibc

/// One I/O thread: an epoll loop over the shared listener, its own
/// connections and its wake-up eventfd.
///
/// `@unchecked Sendable` because the loop is built on the starting thread and
/// then handed to its own thread, which alone touches its mutable state from
/// then on; other threads reach it only through `LoopHandle`.
final class EventLoop: @unchecked Sendable {
    let shared: ServerShared
    let handle: LoopHandle
    let limits: HTTPLimits
    let epollFD: Int32
    var connections: [Connection?] = []
    var liveConnections = 0
    var date = HTTPDate()
    var requestIDs = RequestIDGenerator()
    var nextSerial: UInt64 = 0
    let readBuffer: UnsafeMutableRawBufferPointer
    var now: Double
    var stopping = false
    var graceDeadline = Double.infinity
    /// Each connection's next deadline (or an earlier one: see `reschedule`).
    var deadlines = DeadlineQueue()
    /// Set while the listener is unwatched for lack of descriptors (see `pauseAccepting`).
    var acceptPausedUntil: Double?

    static let readBufferBytes = 64 * 1024
    /// What every connection is watched for; EPOLLOUT joins only while a write is blocked.
    static let readEvents = EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLET.rawValue

    init(shared: ServerShared, handle: LoopHandle) throws {
        self.shared = shared
        self.handle = handle
        self.limits = shared.configuration.limits
        epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epollFD >= 0 else { throw Socket.Failure(call: "epoll_create1", code: errno) }
        readBuffer = .allocate(byteCount: Self.readBufferBytes, alignment: 16)
        now = MonotonicClock.now()
        date.refresh()
        // EPOLLEXCLUSIVE: one loop wakes per new connection, not all of them.
        try watch(shared.listenerFD, events: EPOLLIN.rawValue | EPOLLEXCLUSIVE.rawValue)
        try watch(handle.eventFD, events: EPOLLIN.rawValue)
    }

    func watch(_ fd: Int32, events: UInt32) throws {
        var event = epoll_event()
        event.events = events
        event.data.fd = fd
        guard epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event) == 0 else {
            throw Socket.Failure(call: "epoll_ctl", code: errno)
        }
    }

    /// Runs until shutdown has finished; then releases everything it owns.
    func run() {
        let capacity = 256
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: capacity)
        defer { events.deallocate() }
        while true {
            let count = epoll_wait(epollFD, events, Int32(capacity), waitMillis())
            now = MonotonicClock.now()
            date.refresh()
            if count < 0 && errno != EINTR {
                shared.logger.critical("epoll_wait failed: errno \(errno)")
                break
            }
            for i in 0..<max(0, Int(count)) {
                let fd = events[i].data.fd
                let flags = events[i].events
                if fd == shared.listenerFD {
                    acceptConnections()
                } else if fd == handle.eventFD {
                    var counter: UInt64 = 0
                    _ = read(handle.eventFD, &counter, 8)
                    for message in handle.drain() { process(message) }
                } else if let connection = connection(fd) {
                    let ends = EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue
                    connection.state.polled(input: flags & (EPOLLIN.rawValue | ends) != 0, hangup: flags & ends != 0)
                    drive(connection)
                }
            }
            resumeAcceptingIfDue()
            expireDue()
            if stopping && (liveConnections == 0 || now >= graceDeadline) { break }
        }
        teardown()
    }

    func connection(_ fd: Int32) -> Connection? {
        Int(fd) < connections.count ? connections[Int(fd)] : nil
    }

    /// A live connection matching a message from a worker, or nil if it has gone.
    func connection(_ fd: Int32, serial: UInt64) -> Connection? {
        guard let connection = connection(fd), connection.serial == serial else { return nil }
        return connection
    }

    func process(_ message: LoopMessage) {
        switch message {
        case .response(let fd, let serial, let response):
            guard let connection = connection(fd, serial: serial), connection.state.awaitsResponse else {
                // Parked after its connection went: nothing will resume it.
                if case .parked(let parking) = response.body { parking.ticket.abandon() }
                return
            }
            finish(connection, response)
            drive(connection)
        case .wake(let fd, let serial, let ticket):
            wakeParked(fd: fd, serial: serial, ticket: ticket)
        case .segment(let fd, let serial, let bytes, let channel):
            guard let connection = connection(fd, serial: serial), connection.state.awaitsSegments else {
                channel.release(cancel: true)
                return
            }
            connection.enqueue(bytes)
            connection.pendingAck = channel
            drive(connection)
        case .streamEnd(let fd, let serial, let failed, let bytes):
            guard let connection = connection(fd, serial: serial), connection.state.awaitsSegments else { return }
            if failed {
                // Mid-body there is no way to send an error; cutting the
                // connection tells the client the body is incomplete.
                shared.logger.warning("streamed body failed after \(bytes) bytes; closing connection")
                close(connection)
                return
            }
            connection.current?.bodyBytes = bytes
            complete(connection)
            drive(connection)
        case .shutdown:
            beginShutdown()
        }
    }

    func teardown() {
        for case let connection? in connections { close(connection) }
        for message in handle.close() {
            if case .segment(_, _, _, let channel) = message { channel.release(cancel: true) }
        }
        Glibc.close(epollFD)
        readBuffer.deallocate()
    }
}

// Socket I/O: driving a connection, reading, writing, lingering, closing.
extension EventLoop {
    enum FlushResult { case done, blocked, failed }

    /// Advances a connection as far as its input and output allow.
    /// Requests are taken one at a time, so pipelined answers stay in order.
    func drive(_ connection: Connection) {
        defer { reschedule(connection) }
        while true {
            if connection.hasPendingOutput {
                switch flush(connection) {
                case .failed:
                    close(connection)
                    return
                case .blocked:
                    if !watchWrites(connection, true) { close(connection) }
                    return
                case .done:
                    if connection.watchingWrites, !watchWrites(connection, false) {
                        close(connection)
                        return
                    }
                }
            }
            if let ack = connection.pendingAck {
                connection.pendingAck = nil
                ack.release(cancel: false)
            }
            switch connection.state.next(now: now, stopping: stopping) {
            case .wait:
                return
            case .resume:
                resumeParked(connection, .woken)
                return
            case .close:
                close(connection)
                return
            case .linger(let shutDown):
                // Our side is shut, and the peer given a moment to close, so that the
                // last response is not destroyed by an RST for unread input.
                if shutDown { shutdown(connection.fd, Int32(SHUT_WR)) }
                drainLinger(connection)
                return
            case .parse:
                switch connection.parser.next() {
                case .request(let request):
                    startRequest(connection, request)
                case .expectContinue:
                    connection.enqueue(ResponseSerializer.continueResponse)
                case .error(let error):
                    refuse(connection, error)
                case .needMore:
                    switch connection.state.needsInput(connection.progress, now: now) {
                    case .close:
                        close(connection)
                        return
                    case .wait:
                        return
                    case .read:
                        guard readChunk(connection) else { return }
                    }
                }
            }
        }
    }

    /// Reads once into the parser; false when there is nothing more to do now.
    private func readChunk(_ connection: Connection) -> Bool {
        let n = read(connection.fd, readBuffer.baseAddress, readBuffer.count)
        if n > 0 {
            connection.parser.append(UnsafeRawBufferPointer(rebasing: readBuffer[0..<n]))
            connection.state.read(n, filledBuffer: n == readBuffer.count, now: now)
            return true
        }
        if n == 0 {
            connection.state.read(0, filledBuffer: false, now: now)
            return true
        }
        switch errno {
        case EAGAIN, EWOULDBLOCK:
            connection.state.readWouldBlock()
            return false
        case EINTR:
            return true
        default:
            close(connection)
            return false
        }
    }

    /// Writes pending output until done or the socket is full.
    func flush(_ connection: Connection) -> FlushResult {
        while connection.hasPendingOutput {
            let sent: Int
            if connection.outOffset < connection.out.count && connection.outBodyOffset < connection.outBody.count {
                sent = connection.out.withUnsafeBytes { head in
                    connection.outBody.withUnsafeBytes { body in
                        var vectors = (
                            iovec(
                                iov_base: UnsafeMutableRawPointer(mutating: head.baseAddress! + connection.outOffset),
                                iov_len: head.count - connection.outOffset),
                            iovec(
                                iov_base: UnsafeMutableRawPointer(mutating: body.baseAddress! + connection.outBodyOffset),
                                iov_len: body.count - connection.outBodyOffset)
                        )
                        return withUnsafeMutableBytes(of: &vectors) { raw in
                            var message = msghdr()
                            message.msg_iov = raw.baseAddress!.assumingMemoryBound(to: iovec.self)
                            message.msg_iovlen = 2
                            return sendmsg(connection.fd, &message, Int32(MSG_NOSIGNAL))
                        }
                    }
                }
            } else if connection.outOffset < connection.out.count {
                sent = connection.out.withUnsafeBytes {
                    send(connection.fd, $0.baseAddress! + connection.outOffset, $0.count - connection.outOffset, Int32(MSG_NOSIGNAL))
                }
            } else {
                sent = connection.outBody.withUnsafeBytes {
                    send(connection.fd, $0.baseAddress! + connection.outBodyOffset, $0.count - connection.outBodyOffset, Int32(MSG_NOSIGNAL))
                }
            }
            if sent > 0 {
                let fromHead = min(sent, connection.out.count - connection.outOffset)
                connection.outOffset += fromHead
                connection.outBodyOffset += sent - fromHead
                connection.state.writeProgressed()
                continue
            }
            switch errno {
            case EAGAIN, EWOULDBLOCK:
                connection.state.writeBlocked(now: now)
                return .blocked
            case EINTR:
                continue
            default:
                return .failed
            }
        }
        // Keep a small buffer for the next response; let big ones go.
        if connection.out.capacity > 64 * 1024 {
            connection.out = []
        } else {
            connection.out.removeAll(keepingCapacity: true)
        }
        connection.outOffset = 0
        connection.outBody = []
        connection.outBodyOffset = 0
        return .done
    }

    /// Turns the connection's EPOLLOUT interest on (a write is blocked) or off (all written).
    /// False when epoll refuses, which leaves the connection unable to make progress.
    func watchWrites(_ connection: Connection, _ on: Bool) -> Bool {
        guard connection.watchingWrites != on else { return true }
        var event = epoll_event()
        event.events = on ? Self.readEvents | EPOLLOUT.rawValue : Self.readEvents
        event.data.fd = connection.fd
        guard epoll_ctl(epollFD, EPOLL_CTL_MOD, connection.fd, &event) == 0 else {
            shared.logger.error("epoll_ctl(MOD) failed: errno \(errno)")
            return false
        }
        connection.watchingWrites = on
        return true
    }

    /// Reads and drops input until the peer closes, too much arrives, or the socket is empty.
    private func drainLinger(_ connection: Connection) {
        while connection.state.readable {
            let n = read(connection.fd, readBuffer.baseAddress, readBuffer.count)
            if n > 0 {
                guard connection.state.drained(n) else { close(connection); return }
            } else if n == 0 {
                close(connection)
                return
            } else if errno == EAGAIN || errno == EWOULDBLOCK {
                connection.state.readWouldBlock()
            } else if errno != EINTR {
                close(connection)
                return
            }
        }
    }

    /// Closes at once, releasing anything waiting on the connection.
    func close(_ connection: Connection) {
        guard let slot = connections[Int(connection.fd)], slot === connection else { return }
        connections[Int(connection.fd)] = nil
        deadlines.remove(connection.fd)
        liveConnections -= 1
        shared.openConnections.subtract(1, ordering: .relaxed)
        if let ack = connection.pendingAck {
            connection.pendingAck = nil
            ack.release(cancel: true)
        }
        if let parked = connection.parking {
            connection.parking = nil
            parked.ticket.abandon()
        }
        // Closing removes the fd from the epoll set too.
        Glibc.close(connection.fd)
        shared.descriptors.replenish()
    }
}
