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
    /// The protocol version.
    public var version: HTTPVersion
    /// The header fields, trailers of a chunked body appended at the end.
    public var headers: HTTPHeaders
    /// The de-chunked body; empty when there is none.
    public var body: [UInt8]
    /// Whether the connection may serve another request after this one,
    /// from the version and `Connection` header (RFC 9112 §9.3).
    public var keepAlive: Bool

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
    }

    /// The first decoded value of a query parameter, or nil.
    public func queryValue(_ name: String) -> String? {
        query.first { $0.name == name }?.value
    }
}
