import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP request FerryKit sends.
public struct TransportRequest: Sendable, Equatable {
    public var method: String
    /// Path and query, e.g. `/v1/changes?since=...`.
    public var path: String
    public var headers: [String: String]
    public var body: Data?

    public init(method: String, path: String, headers: [String: String] = [:], body: Data? = nil) {
        (self.method, self.path, self.headers, self.body) = (method, path, headers, body)
    }
}

/// One HTTP answer.
public struct TransportResponse: Sendable, Equatable {
    public var status: Int
    /// Header names lowercased.
    public var headers: [String: String]
    public var body: Data

    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        (self.status, self.body) = (status, body)
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
    }

    /// The body as a JSON object, when it is one.
    public var object: [String: JSONValue]? { (try? JSONValue.decode(body))?.object }
}

/// Where FerryKit's requests go. Production uses ``URLSessionTransport``; tests
/// put faults in between (a dropped request, a lost answer, a 503).
public protocol Transport: Sendable {
    /// Sends `request`; throws when no answer came (connection refused, cut,
    /// timed out).
    func send(_ request: TransportRequest) async throws -> TransportResponse
}

/// ``Transport`` over `URLSession`, against one server.
public final class URLSessionTransport: Transport {
    let baseURL: URL
    let session: URLSession

    /// `baseURL` is the server's root, e.g. `https://sync.example.com`.
    public init(baseURL: URL, timeout: TimeInterval = 30) {
        self.baseURL = baseURL
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        session = URLSession(configuration: configuration)
    }

    // A URLSession lives until it is invalidated, whoever still holds it: an
    // app that signs out and in again would otherwise keep every old one.
    deinit { session.finishTasksAndInvalidate() }

    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        guard let url = URL(string: request.path, relativeTo: baseURL) else { throw URLError(.badURL) }
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body
        let (data, response) = try await session.data(for: urlRequest)
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
        }
        return TransportResponse(status: http.statusCode, headers: headers, body: data)
    }
}
