// What a handler answers to park its exchange (`HTTPParking`, the body case
// `.parked`), for a long poll that answers later or an open-ended stream
// (server-sent events) whose body goes on in pieces. The ticket it names is
// ParkingTicket.swift; the loop's side is EventLoop+Parking.swift.

/// "Not yet": hold this exchange, without a thread, until its ticket is woken,
/// its deadline passes or the server shuts down; then call the responder
/// again for the same request (``RequestContext/resumption`` says why, and
/// ``RequestContext/parkingTicket()`` gives the same ticket).
///
/// Two uses:
/// - **A long poll** (`stream` nil until the answer is ready): nothing is
///   sent while the exchange is parked; a later call answers it whole, as
///   any response. While parked, the connection's idle and header timeouts do
///   not apply, and a client that closes the connection abandons it (see
///   ``ParkingTicket/whenAbandoned(_:)``).
/// - **An open-ended stream** (`stream` set): the first `.parked` answer
///   with a stream sends its status and fields at once, with a chunked body
///   (close-delimited to HTTP/1.0), and `stream.bytes` as its first part.
///   Each later call's answer continues the body: another `.parked` adds its
///   `stream.bytes` and parks again; any other answer adds its body bytes as
///   the last part and ends the stream (its status and fields are not sent:
///   the head is out). A wake is held back until the client has taken what
///   was sent before, so a slow reader slows its stream instead of growing
///   the server's buffers; the write timeout closes a reader that stops.
///   Streamed parts are never content-coded.
public struct HTTPParking: Sendable {
    /// The exchange's ticket, from ``RequestContext/parkingTicket()``.
    public var ticket: ParkingTicket
    /// When to resume with ``Resumption/Reason/deadline``, in ``MonotonicClock``
    /// seconds; nil waits for a wake or shutdown alone. The loop keeps every
    /// connection's deadline in one queue and wakes when the first is due:
    /// no timer or thread per exchange, and nothing runs for those not due.
    public var deadline: Double?
    /// The body so far, for an open-ended stream; nil for a long poll.
    public var stream: Stream?

    /// A part of an open-ended body, and what keeps the stream alive between parts.
    public struct Stream: Sendable {
        /// Body bytes to send now (unframed: the server adds the chunk framing).
        public var bytes: [UInt8]
        /// Sent whenever the stream has been quiet this long, so that proxies
        /// and clients do not take it for dead; nil for none.
        public var heartbeat: Heartbeat?

        public init(bytes: [UInt8], heartbeat: Heartbeat? = nil) {
            self.bytes = bytes
            self.heartbeat = heartbeat
        }
    }

    /// Bytes sent on a quiet stream every `interval` seconds.
    public struct Heartbeat: Sendable {
        public var interval: Double
        public var bytes: [UInt8]

        public init(interval: Double, bytes: [UInt8]) {
            self.interval = interval
            self.bytes = bytes
        }
    }

    public init(ticket: ParkingTicket, deadline: Double? = nil, stream: Stream? = nil) {
        self.ticket = ticket
        self.deadline = deadline
        self.stream = stream
    }
}

extension HTTPResponse {
    /// Parks the exchange (see ``HTTPParking``). For a stream, `status` and
    /// `headers` are what the head says when it goes out with the first part.
    public static func parked(_ parking: HTTPParking, status: Int = 200, headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        HTTPResponse(status: status, headers: headers, body: .parked(parking))
    }

    /// Whether this answer parks its exchange instead of ending it.
    public var isParked: Bool {
        if case .parked = body { return true }
        return false
    }
}
