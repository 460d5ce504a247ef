// One client connection: `ConnectionState`, the value that decides what the
// connection does next (read, parse, wait for a worker, linger, close, time
// out), and `Connection`, which carries that state together with what the
// event loop needs to act on it: the descriptor, the parser, the pending output
// and the exchange being answered (`Exchange`). The decisions live in a value
// with no sockets so that every transition can be tested alone (see
// ConnectionStateTests); EventLoop.swift performs the actions on the socket,
// and EventLoop+Parking.swift those of a parked exchange.

/// The decisions of one connection, from its first byte to its close.
///
/// The event loop reports what happened (epoll readiness, a read's result, a
/// parsed request, a response started and queued, a write that stalled, a
/// deadline come, shutdown) and does what the answer says. Time comes in as an
/// argument, so a test can move it.
///
/// Phases, in the usual order: `reading` → `handling` (a worker runs the
/// handler) → `streaming` (only for a streamed body) → `reading` again for the
/// next, possibly already pipelined, request; or, once the last response is
/// written, `lingering` until the peer closes or the deadline passes. A
/// handler may park its exchange (HTTPParking): `handling` → `parked` →
/// `handling` again when it is resumed, as often as it parks.
struct ConnectionState: Equatable {
    enum Phase: Equatable {
        /// Parsing, or waiting for, the next request.
        case reading
        /// A worker is running the handler; pipelined input waits in the socket.
        case handling
        /// A worker is producing a streamed body.
        case streaming
        /// The handler parked the exchange: no thread runs for it until it is resumed.
        case parked
        /// The last response is out and our side is shut; input is drained until the peer closes.
        case lingering
    }

    /// How far the parser has got into the next request.
    enum Progress: Equatable {
        /// Nothing of a next request has arrived.
        case none
        /// Part of a request line or header section.
        case head
        /// The head is complete and the body is partway.
        case body
    }

    /// What to do once the pending output is written.
    enum Step: Equatable {
        /// Ask the parser for the next event.
        case parse
        /// Nothing until a worker answers or the socket becomes ready.
        case wait
        /// Drain input until the peer closes; `shutDown` the first time, when our
        /// side must be shut (SHUT_WR) first.
        case linger(shutDown: Bool)
        /// Resume the parked exchange now: a wake waited for the output to drain.
        case resume
        /// Close at once: the peer left a parked exchange.
        case close
    }

    /// What to do when the parser needs more bytes.
    enum InputAction: Equatable {
        /// Read the socket.
        case read
        /// Wait for epoll to report input.
        case wait
        /// The peer has closed with a request unfinished, which cannot be answered.
        case close
    }

    /// What the timer decides for the connection when its deadline comes.
    enum TimerAction: Equatable {
        case none
        /// Close at once, without an answer.
        case close
        /// Answer 408 with this detail and close after it.
        case timeOut(String)
    }

    let limits: HTTPLimits
    private(set) var phase = Phase.reading
    /// Edge-triggered epoll: whether the socket may have unread input.
    private(set) var readable = true
    /// Whether a read has returned 0: the peer sends nothing more.
    private(set) var peerClosed = false
    /// Whether epoll has reported the peer's end (EPOLLRDHUP, EPOLLHUP, EPOLLERR): then
    /// reads go on until one returns 0, since no further edge will come for it.
    private(set) var hangupReported = false
    /// Whether the exchange being answered leaves the connection open: first the
    /// request's wish, then, once the head is written, the decision.
    private(set) var keepAlive = true
    /// Close (gracefully) once the pending output is written.
    private(set) var closeAfterWrite = false
    /// First byte of the current request head, for the header timeout.
    private(set) var headStartedAt: Double?
    private(set) var lastReadAt: Double
    /// Bytes read on this connection, for the body's pace.
    private(set) var bytesRead = 0
    /// When the parser first waited for more of the current body, and `bytesRead` then.
    private(set) var bodyStartedAt: Double?
    private(set) var bodyStartBytes = 0
    private(set) var idleSince: Double
    /// When writes started to make no progress, for the write timeout.
    private(set) var writeStalledSince: Double?
    private(set) var lingerDeadline: Double = 0
    private(set) var lingerDrained = 0
    /// A wake for the parked exchange that waits until the pending output is written.
    private(set) var wakeDeferred = false

    /// Input a lingering connection drains before it gives up on the peer.
    static let maxLingerBytes = 1024 * 1024

    /// A connection accepted at `now`.
    init(limits: HTTPLimits, now: Double) {
        self.limits = limits
        lastReadAt = now
        idleSince = now
    }

    // MARK: The socket

    /// Epoll reported the socket: `input` for EPOLLIN (or any end), `hangup` for the peer's end.
    mutating func polled(input: Bool, hangup: Bool) {
        if input { readable = true }
        if hangup { hangupReported = true }
    }

    /// A read returned `count` bytes (0: the peer's end); `filledBuffer` when it used the whole buffer.
    mutating func read(_ count: Int, filledBuffer: Bool, now: Double) {
        if count > 0 {
            lastReadAt = now
            bytesRead += count
            // A short read emptied the socket, and with edge-triggered epoll new input
            // brings a new event: reading again now would only return EAGAIN, one wasted
            // system call per request. Unless the peer's end was reported, which
            // brings no further event: then read on until the 0 that says so.
            if !filledBuffer && !hangupReported { readable = false }
        } else {
            peerClosed = true
            readable = false
        }
    }

    /// A read found nothing (EAGAIN).
    mutating func readWouldBlock() {
        readable = false
    }

    /// A write sent something.
    mutating func writeProgressed() {
        writeStalledSince = nil
    }

    /// A write found the socket full (EAGAIN).
    mutating func writeBlocked(now: Double) {
        if writeStalledSince == nil { writeStalledSince = now }
    }

    // MARK: Requests and responses

    /// What to do once the pending output is written. A connection whose last
    /// response is out starts lingering; shorter while `stopping`, so that
    /// shutdown does not wait on slow peers.
    mutating func next(now: Double, stopping: Bool) -> Step {
        if closeAfterWrite && phase == .reading {
            phase = .lingering
            lingerDeadline = now + (stopping ? 0.25 : 2)
            return .linger(shutDown: true)
        }
        switch phase {
        case .reading: return .parse
        case .handling, .streaming: return .wait
        case .lingering: return .linger(shutDown: false)
        case .parked:
            // A parked exchange waits for nobody but its waker, so a peer that has
            // gone (or half-closed: it cannot be told apart in time) ends it.
            if hangupReported { return .close }
            return wakeDeferred ? .resume : .wait
        }
    }

    /// The handler parked the exchange.
    mutating func parked() {
        phase = .parked
        wakeDeferred = false
    }

    /// A wake for the parked exchange came while output is pending: resume
    /// once it is written (``next(now:stopping:)`` says `.resume`).
    mutating func deferWake() {
        wakeDeferred = true
    }

    /// The parked exchange goes back to the responder.
    mutating func resumed() {
        phase = .handling
        wakeDeferred = false
    }

    /// Whether the exchange is parked.
    var isParked: Bool { phase == .parked }

    /// The parser needs more bytes and has got as far as `progress`.
    mutating func needsInput(_ progress: Progress, now: Double) -> InputAction {
        switch progress {
        case .head: if headStartedAt == nil { headStartedAt = now }
        case .none: headStartedAt = nil
        case .body: if bodyStartedAt == nil { (bodyStartedAt, bodyStartBytes) = (now, bytesRead) }
        }
        if peerClosed { return .close }
        return readable ? .read : .wait
    }

    /// A complete request was parsed. `keepAlive` is what its version and
    /// `Connection` field ask for; `inline` when the I/O thread answers it itself.
    /// Otherwise a worker has it, and pipelined requests wait until it answers.
    mutating func requestParsed(keepAlive: Bool, inline: Bool) {
        headStartedAt = nil
        bodyStartedAt = nil
        self.keepAlive = keepAlive
        if !inline { phase = .handling }
    }

    /// The server refuses a request (malformed, timed out, over the connection cap);
    /// `close` when the connection cannot go on after the refusal.
    mutating func refusing(close: Bool) {
        keepAlive = !close
    }

    /// A response head is about to be written; returns whether it keeps the
    /// connection open (its `Connection` field). Not while `stopping`, not once
    /// the peer has closed its side, not for a body that ends with the
    /// connection (`closeDelimited`). `streams` when a worker now produces the body.
    mutating func responseStarted(stopping: Bool, closeDelimited: Bool, streams: Bool) -> Bool {
        keepAlive = keepAlive && !stopping && !peerClosed && !closeDelimited
        if streams { phase = .streaming }
        return keepAlive
    }

    /// The whole response is queued: ready for the next request, or for the close.
    mutating func responseQueued(now: Double) {
        if !keepAlive { closeAfterWrite = true }
        phase = .reading
        idleSince = now
    }

    /// Whether a worker's answer is awaited (a message for another phase comes from a stale exchange).
    var awaitsResponse: Bool { phase == .handling }

    /// Whether a streamed body is being produced.
    var awaitsSegments: Bool { phase == .streaming }

    /// `count` bytes were drained while lingering; false when the peer sent too much to wait for.
    mutating func drained(_ count: Int) -> Bool {
        lingerDrained += count
        return lingerDrained <= Self.maxLingerBytes
    }

    // MARK: Timers and shutdown

    /// The timer's decision at `now`: a stalled write, an expired linger, and for
    /// a connection waiting on its client, the header, body and idle timeouts. An
    /// idle connection is closed at once while `stopping`.
    func timer(now: Double, stopping: Bool, progress: Progress, outputPending: Bool) -> TimerAction {
        if let stalled = writeStalledSince, now >= stalled + limits.writeTimeoutSeconds { return .close }
        guard let limit = phaseLimit(stopping: stopping, progress: progress, outputPending: outputPending),
            now >= limit.at
        else { return .none }
        return limit.action
    }

    /// The first time at which ``timer(now:stopping:progress:outputPending:)``
    /// acts, as things stand; nil when no limit runs (a worker has the request,
    /// or a parked exchange whose writes are not stalled). Whatever the loop
    /// reports to the state may move it.
    func deadline(stopping: Bool, progress: Progress, outputPending: Bool) -> Double? {
        let stall = writeStalledSince.map { $0 + limits.writeTimeoutSeconds }
        guard let limit = phaseLimit(stopping: stopping, progress: progress, outputPending: outputPending) else {
            return stall
        }
        return min(stall ?? limit.at, limit.at)
    }

    /// The limit of the current phase: when it expires and what then happens.
    private func phaseLimit(stopping: Bool, progress: Progress, outputPending: Bool) -> (at: Double, action: TimerAction)? {
        switch phase {
        case .lingering:
            return (lingerDeadline, .close)
        case .reading where !outputPending && !closeAfterWrite:
            switch progress {
            case .head:
                guard let started = headStartedAt else { return nil }
                return (started + limits.headerTimeoutSeconds, .timeOut("The request head did not arrive in time."))
            case .body:
                let stall = lastReadAt + limits.bodyTimeoutSeconds
                // The pace: a grace of bodyTimeoutSeconds, then a second more for each
                // minBodyBytesPerSecond bytes that came.
                if let started = bodyStartedAt, limits.minBodyBytesPerSecond > 0 {
                    let pace =
                        started + limits.bodyTimeoutSeconds
                        + Double(bytesRead - bodyStartBytes) / Double(limits.minBodyBytesPerSecond)
                    if pace < stall { return (pace, .timeOut("The request body came too slowly.")) }
                }
                return (stall, .timeOut("The request body stalled."))
            case .none:
                // While stopping an idle connection is due at once (it went idle at or before now).
                return (stopping ? idleSince : idleSince + limits.idleTimeoutSeconds, .close)
            }
        default:
            return nil
        }
    }

    /// Whether shutdown closes the connection at once: only when nothing of a
    /// request is in hand, neither parsed, nor with a worker, nor being written.
    func closesAtShutdown(progress: Progress, outputPending: Bool) -> Bool {
        phase == .reading && progress == .none && !outputPending
    }
}

/// One client connection's socket-side state, owned by a single I/O loop thread.
final class Connection {
    let fd: Int32
    /// Distinguishes this connection from a later one reusing the same fd.
    let serial: UInt64
    let remoteAddress: String
    var parser: RequestParser
    var state: ConnectionState

    /// Output: `out` first, then `outBody` (a large body kept apart to avoid a copy).
    var out: [UInt8] = []
    var outOffset = 0
    var outBody: [UInt8] = []
    var outBodyOffset = 0

    /// Whether epoll watches the socket for EPOLLOUT (only while a write is blocked).
    var watchingWrites = false

    /// The request being answered.
    var current: Exchange?
    /// A streaming producer waiting for its segment to be written.
    var pendingAck: StreamChannel?
    /// The exchange's parking, from its first park until it is answered.
    var parking: ParkedExchange?

    init(fd: Int32, serial: UInt64, remoteAddress: String, limits: HTTPLimits, now: Double) {
        self.fd = fd
        self.serial = serial
        self.remoteAddress = remoteAddress
        self.parser = RequestParser(limits: limits)
        self.state = ConnectionState(limits: limits, now: now)
    }

    var hasPendingOutput: Bool { outOffset < out.count || outBodyOffset < outBody.count }

    /// How far the parser has got into the next request, for the state's decisions.
    var progress: ConnectionState.Progress {
        guard parser.hasPartialRequest else { return .none }
        return parser.isReadingHead ? .head : .body
    }

    /// Queues bytes after any pending output.
    func enqueue(_ bytes: [UInt8]) {
        if outBodyOffset < outBody.count {
            // Keep order: the body segment must go first; fold it into `out`.
            out.append(contentsOf: outBody[outBodyOffset...])
            outBody = []
            outBodyOffset = 0
        }
        if out.isEmpty {
            out = bytes
            outOffset = 0
        } else {
            out.append(contentsOf: bytes)
        }
    }
}

/// One request/response exchange, for the response head and the access log.
struct Exchange {
    var method: String
    var path: String
    var requestID: String
    var startedAt: Double
    var isHEAD: Bool
    var http10: Bool
    var status: Int = 0
    var bodyBytes: Int = 0
    /// The request, kept while a handler has it, so that a parked exchange can be answered again.
    var request: HTTPRequest?
}

/// What the loop keeps of a parked exchange between its handler's calls.
struct ParkedExchange {
    var ticket: ParkingTicket
    var deadline: Double?
    var heartbeat: HTTPParking.Heartbeat?
    /// Once a stream's head is out: how its body is framed (chunked, or to the close).
    var stream: ResponseFraming?
    /// When the stream last sent something, for the heartbeat.
    var lastSentAt: Double
    /// Why it was last resumed, to catch a handler that parks again at shutdown.
    var lastReason: Resumption.Reason?
}
