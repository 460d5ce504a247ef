import Ferry
import FerryHTTP
import FerryHTTPTestSupport
import Foundation
import Logging

/// Calls a Ferry app's responder (the middleware chain, the router and the
/// handlers) with a request value and reads the response value, as
/// Hummingbird's `.router` test mode does: no socket, no HTTP parsing, no
/// content codings, and no parking (a long poll answers at once). For tests of
/// what Ferry answers; tests of how it travels (framing, codings, timeouts,
/// parked exchanges, connections) keep ``TestHTTPClient`` over a ``TestServer``.
///
/// Answers come back as ``TestHTTPClient/Response``, so a test moves between
/// the two by changing where it gets its client.
public struct RouterTestClient: Sendable {
    let responder: any HTTPResponder
    let logger: Logger

    public init(app: FerryApp) {
        responder = app.responder()
        var logger = Logger(label: "ferry-router-test")
        logger.logLevel = .warning
        self.logger = logger
    }

    /// A target the router client cannot read, or an answer it cannot hold.
    public struct Unparsable: Error, CustomStringConvertible {
        public let description: String
    }

    /// Sends `method target` with `headers` and a raw `body` (or `json`, which
    /// adds `Content-Type: application/json`) through the responder.
    @discardableResult
    public func request(
        _ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8]? = nil, json: Any? = nil
    ) throws -> TestHTTPClient.Response {
        var fields = HTTPHeaders([("Host", "localhost")] + headers)
        var payload = body ?? []
        if let json {
            payload = Array(try JSONSerialization.data(withJSONObject: json, options: [.fragmentsAllowed]))
            if fields["Content-Type"] == nil { fields.add("Content-Type", "application/json") }
        }
        if !payload.isEmpty { fields.add("Content-Length", String(payload.count)) }
        let (path, rawQuery, query) = try Self.split(target)
        let request = HTTPRequest(
            method: method, target: target, path: path, rawQuery: rawQuery, query: query, headers: fields, body: payload)
        let context = RequestContext(requestID: "router-test", remoteAddress: "127.0.0.1:0", logger: logger)
        let response = responder.respond(to: request, context: context)
        guard let bytes = try response.body.collected() else {
            throw Unparsable(description: "\(method) \(target) parked its exchange, which a router-level test cannot hold")
        }
        // HEAD answers carry no body on the wire; the server drops it, so the router client does too.
        return TestHTTPClient.Response(
            status: response.status, headers: response.headers.fields.map { ($0.name, $0.value) },
            body: method == "HEAD" ? [] : bytes)
    }

    /// The path, the raw query and its decoded pairs, as the request parser makes them.
    public static func split(_ target: String) throws -> (path: String, rawQuery: String?, query: [(name: String, value: String)]) {
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        guard let path = String(parts[0]).removingPercentEncoding else {
            throw Unparsable(description: "the path of \(target) is not percent-encoded UTF-8")
        }
        guard parts.count == 2 else { return (path, nil, []) }
        let raw = String(parts[1])
        var pairs: [(name: String, value: String)] = []
        for pair in raw.split(separator: "&") where !pair.isEmpty {
            let halves = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ part: Substring) throws -> String {
                guard let text = part.replacingOccurrences(of: "+", with: " ").removingPercentEncoding else {
                    throw Unparsable(description: "the query of \(target) is not percent-encoded UTF-8")
                }
                return text
            }
            pairs.append((try decode(halves[0]), halves.count == 2 ? try decode(halves[1]) : ""))
        }
        return (path, raw, pairs)
    }
}
