/// One client connection's state, owned by a single I/O loop thread.
final class Connection {
    enum Phase {
        /// Parsing (or waiting for) the next request.
        case reading
        /// A worker is running the handler; further input waits in the socket.
        case handling
        /// A worker is producing a streamed body.
        case streaming
        /// The last response is out and our side is shut; draining input until the peer closes.
        case lingering
    }

    let fd: Int32
    /// Distinguishes this connection from a later one reusing the same fd.
    let serial: UInt64
    let remoteAddress: String
    var parser: RequestParser
    var phase: Phase = .reading

    /// Output: `out` first, then `outBody` (a large body kept apart to avoid a copy).
    var out: [UInt8] = []
    var outOffset = 0
    var outBody: [UInt8] = []
    var outBodyOffset = 0

    /// Edge-triggered epoll: whether the socket may have unread input.
    var readable = true
    var readEOF = false
    /// Whether epoll has reported the peer's end (EPOLLRDHUP, EPOLLHUP, EPOLLERR): then
    /// reads go on until one returns 0, since no further edge will come for it.
    var sawHangup = false
    /// Whether epoll watches the socket for EPOLLOUT (only while a write is blocked).
    var watchingWrites = false
    /// Close (gracefully) once the pending output is written.
    var closeAfterWrite = false

    /// First byte of the current request head, for the header timeout.
    var headStartedAt: Double?
    var lastReadAt: Double
    var idleSince: Double
    /// When writes started to make no progress, for the write timeout.
    var writeStalledSince: Double?
    var lingerDeadline: Double = 0
    var lingerDrained = 0

    /// The request being answered.
    var current: Exchange?
    /// A streaming producer waiting for its segment to be written.
    var pendingAck: StreamChannel?

    init(fd: Int32, serial: UInt64, remoteAddress: String, limits: HTTPLimits, now: Double) {
        self.fd = fd
        self.serial = serial
        self.remoteAddress = remoteAddress
        self.parser = RequestParser(limits: limits)
        self.lastReadAt = now
        self.idleSince = now
    }

    var hasPendingOutput: Bool { outOffset < out.count || outBodyOffset < outBody.count }

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
    var keepAlive: Bool
    var http10: Bool
    var status: Int = 0
    var bodyBytes: Int = 0
}
