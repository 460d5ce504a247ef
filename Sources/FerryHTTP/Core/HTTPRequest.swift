// What a handler is given: the `HTTPRequest` with its `HTTPHeaders` and
// `HTTPVersion`, and the `RequestContext` around it (request id, peer, route
// pattern and parameters, logger). Kept together because every handler reads
// all of them and none of them means anything alone.

import Logging

/// One complete, validated HTTP request, as the parser hands it on.
///
/// The parser has already enforced every framing rule and size limit, so a
/// value of this type is safe for a handler to trust structurally.
public struct HTTPRequest: Sendable {
    /// The method token exactly as sent (methods are case-sensitive), e.g. `GET`.
    public var method: String
    /// The request target exactly as sent: origin-form `/v1/x?y=1`,
    /// absolute-form `http://host/v1/x`, `*`, or authority-form.
    public var target: String
    /// The percent-decoded path, always beginning with `/` for origin and
    /// absolute forms (absolute-form is reduced to its path).
    public var path: String
    /// The raw query string after `?`, without the `?`, not decoded; nil when absent.
    public var rawQuery: String?
    /// The query's `name=value` pairs, percent-decoded (`+` is a space), in order.
    public var query: [(name: String, value: String)]
    public var version: HTTPVersion
    /// The header fields, trailers of a chunked body appended at the end.
    public var headers: HTTPHeaders
    /// The de-chunked body; empty when there is none.
    public var body: [UInt8]
    /// Whether the connection may serve another request after this one,
    /// from the version and `Connection` header (RFC 9112 §9.3).
    public var keepAlive: Bool
    /// What the server's ``HTTPServerConfiguration/urgent`` test learned of the
    /// request on the I/O thread (Ferry: its credential, a SHA-256 of the
    /// token), so that its handler need not learn it again; nil when no test ran.
    public var learned: (any Sendable)?

    /// A request from its parts; the parser is the usual maker.
    public init(
        method: String, target: String, path: String, rawQuery: String? = nil,
        query: [(name: String, value: String)] = [], version: HTTPVersion = .http1_1,
        headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = [], keepAlive: Bool = true
    ) {
        self.method = method
        self.target = target
        self.path = path
        self.rawQuery = rawQuery
        self.query = query
        self.version = version
        self.headers = headers
        self.body = body
        self.keepAlive = keepAlive
        self.learned = nil
    }

    /// The first decoded value of a query parameter, or nil.
    public func queryValue(_ name: String) -> String? {
        query.first { $0.name == name }?.value
    }
}

/// An ordered list of header fields, as they arrived or will be sent.
///
/// Names keep their original spelling but compare case-insensitively
/// (RFC 9110 §5.1). Repeated fields are kept as separate entries, in order,
/// so that a caller can tell `Content-Length: 5` twice from a list value.
public struct HTTPHeaders: Sendable, Equatable {
    /// The fields in wire order.
    public private(set) var fields: [(name: String, value: String)]

    public init() { fields = [] }

    /// A header list from `(name, value)` pairs, in order.
    public init(_ pairs: [(String, String)]) {
        fields = pairs.map { (name: $0.0, value: $0.1) }
    }

    /// Makes room for `count` fields, so adding that many allocates once.
    public mutating func reserveCapacity(_ count: Int) { fields.reserveCapacity(count) }

    /// The first value of the named field, or nil.
    public subscript(name: String) -> String? {
        for field in fields where Self.equalNames(field.name, name) { return field.value }
        return nil
    }

    /// Every value of the named field, in order.
    public func values(_ name: String) -> [String] {
        fields.compactMap { Self.equalNames($0.name, name) ? $0.value : nil }
    }

    /// Whether the named field occurs at all.
    public func contains(_ name: String) -> Bool { self[name] != nil }

    /// Appends a field, keeping any existing ones of the same name.
    public mutating func add(_ name: String, _ value: String) {
        fields.append((name: name, value: value))
    }

    /// Replaces every field of that name with one field.
    public mutating func replace(_ name: String, _ value: String) {
        remove(name)
        fields.append((name: name, value: value))
    }

    /// Removes every field of that name.
    public mutating func remove(_ name: String) {
        fields.removeAll { Self.equalNames($0.name, name) }
    }

    /// The number of field lines; a repeated name counts once per line.
    public var count: Int { fields.count }

    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.count == rhs.fields.count
            && zip(lhs.fields, rhs.fields).allSatisfy { equalNames($0.name, $1.name) && $0.value == $1.value }
    }

    /// ASCII case-insensitive comparison. Only letters are folded, so that
    /// no two distinct token characters (such as `^` and `~`) compare equal.
    @inlinable
    public static func equalNames(_ a: String, _ b: String) -> Bool {
        // Most comparisons in a header lookup fail on length, which costs nothing to read.
        guard a.utf8.count == b.utf8.count else { return false }
        var a = a, b = b
        return a.withUTF8 { ua in
            b.withUTF8 { ub in
                guard ua.count == ub.count else { return false }
                for i in 0..<ua.count where ua[i] != ub[i] {
                    let x = ua[i] | 0x20
                    guard x == ub[i] | 0x20, x >= 0x61, x <= 0x7a else { return false }
                }
                return true
            }
        }
    }
}

/// An HTTP protocol version from a request line, such as `HTTP/1.1`.
public struct HTTPVersion: Sendable, Equatable, CustomStringConvertible {
    /// The major version digit.
    public var major: Int
    /// The minor version digit.
    public var minor: Int

    /// A version from its two digits.
    public init(major: Int, minor: Int) {
        self.major = major
        self.minor = minor
    }

    public static let http1_0 = HTTPVersion(major: 1, minor: 0)
    public static let http1_1 = HTTPVersion(major: 1, minor: 1)

    /// `HTTP/<major>.<minor>`.
    public var description: String { "HTTP/\(major).\(minor)" }
}

/// What a handler knows about a request besides the request itself.
public struct RequestContext: Sendable {
    /// The request id: the client's `X-Request-Id` when it was safe, else a generated one.
    /// It is echoed in the response.
    public var requestID: String
    /// The peer's address, `ip:port` (IPv6 as `[ip]:port`).
    public var remoteAddress: String
    /// The matched route pattern, e.g. `/v1/:resource/:id`; set by `Router`.
    public var routePattern: String?
    /// The route's parameters; set by `Router`.
    public var parameters: RouteParameters
    /// Monotonic seconds when the request was complete (for durations).
    public var receivedAt: Double
    /// Whatever the application's own layers hand each other about this
    /// request (who the caller is, what to log), carried here so that it shows
    /// in every handler's signature instead of travelling in task-locals. The
    /// HTTP layer never reads it.
    public var attachment: (any Sendable)?
    /// Why the responder is called again for a parked exchange (``HTTPParking``);
    /// nil on the first call.
    public internal(set) var resumption: Resumption?
    /// Where the exchange lives, so that its handler may park it; nil when it
    /// cannot be parked (answered on the I/O thread, or a context the server did not make).
    var exchange: ExchangeAddress?
    /// The exchange's ticket, once a handler has parked it.
    var ticket: ParkingTicket?
    private let baseLogger: Logger

    /// A context; the server makes these.
    public init(
        requestID: String, remoteAddress: String, logger: Logger, routePattern: String? = nil,
        parameters: RouteParameters = RouteParameters(), receivedAt: Double = MonotonicClock.now()
    ) {
        self.requestID = requestID
        self.remoteAddress = remoteAddress
        self.baseLogger = logger
        self.routePattern = routePattern
        self.parameters = parameters
        self.receivedAt = receivedAt
    }

    /// The exchange's ``ParkingTicket``: the same one on every call for a
    /// parked exchange, a new one on the first (so take it once per call).
    /// Nil when the exchange cannot be parked: answered on the I/O thread, or
    /// a context the server did not make (a test, a batch replaying requests).
    public func parkingTicket() -> ParkingTicket? {
        ticket ?? exchange.map { ParkingTicket(address: $0) }
    }

    /// A logger whose lines carry this request's id. Built on use, so that
    /// requests that log nothing pay nothing for it.
    public var logger: Logger {
        var logger = baseLogger
        logger[metadataKey: "request_id"] = .string(requestID)
        return logger
    }
}
