import CEpoll
import Glibc
import Logging

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
    let sweepInterval: Double
    var nextSweep: Double
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
        // Sweep often enough that the shortest timeout is honoured within a quarter of itself.
        let shortest = min(
            limits.headerTimeoutSeconds, limits.idleTimeoutSeconds, limits.bodyTimeoutSeconds,
            limits.writeTimeoutSeconds)
        sweepInterval = min(0.25, max(0.01, shortest / 4))
        nextSweep = now + sweepInterval
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
            let waitMillis = Int32(max(0, min(1000, (nextSweep - now) * 1000)).rounded(.up))
            let count = epoll_wait(epollFD, events, Int32(capacity), waitMillis)
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
                    if flags & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 {
                        connection.readable = true
                    }
                    if flags & (EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 {
                        connection.sawHangup = true
                    }
                    drive(connection)
                }
            }
            if now >= nextSweep {
                resumeAcceptingIfDue()
                sweep()
                nextSweep = now + sweepInterval
            }
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
            guard let connection = connection(fd, serial: serial), connection.phase == .handling else { return }
            finish(connection, response)
            drive(connection)
        case .segment(let fd, let serial, let bytes, let channel):
            guard let connection = connection(fd, serial: serial), connection.phase == .streaming else {
                channel.release(cancel: true)
                return
            }
            connection.enqueue(bytes)
            connection.pendingAck = channel
            drive(connection)
        case .streamEnd(let fd, let serial, let failed, let bytes):
            guard let connection = connection(fd, serial: serial), connection.phase == .streaming else { return }
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
