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

    /// Sends `request`; a cancelled task cancels it (continuous mode ends its
    /// long poll so), and gets `URLError(.cancelled)`.
    ///
    /// Not `session.data(for:)`: on Linux, swift-corelibs-foundation's version
    /// cancels its URLSessionTask synchronously from inside the cancelling
    /// call, which deadlocks when the session's queue is delivering the answer
    /// at that moment (swift-corelibs-foundation #5412; the simulation in
    /// continuous mode froze on it). Here the cancel runs on its own thread.
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        guard let url = URL(string: request.path, relativeTo: baseURL) else { throw URLError(.badURL) }
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body
        let pending = PendingTask()
        let (data, response): (Data, URLResponse) = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let task = session.dataTask(with: urlRequest) { data, response, error in
                    if let error {
                        continuation.resume(throwing: error)
                    } else if let response {
                        continuation.resume(returning: (data ?? Data(), response))
                    } else {
                        continuation.resume(throwing: URLError(.badServerResponse))
                    }
                }
                pending.start(task)
            }
        } onCancel: {
            pending.cancel()
        }
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
        }
        return TransportResponse(status: http.statusCode, headers: headers, body: data)
    }
}

/// One request's URLSessionTask, and whether its caller was cancelled: the
/// two may come in either order.
///
/// `@unchecked Sendable`: its mutable state is only touched under `lock`
/// (`Synchronization.Mutex` would need macOS 15; FerryKit supports 14).
private final class PendingTask: @unchecked Sendable {
    private let lock = NSLock()
    private var task: URLSessionDataTask?
    private var cancelled = false

    func start(_ task: URLSessionDataTask) {
        lock.lock()
        self.task = task
        let cancelled = self.cancelled
        lock.unlock()
        task.resume()
        if cancelled { Self.cancelApart(task) }
    }

    func cancel() {
        lock.lock()
        cancelled = true
        let task = self.task
        lock.unlock()
        if let task { Self.cancelApart(task) }
    }

    /// Cancels on a thread of its own, never inside the cancelling call (see ``URLSessionTransport/send(_:)``).
    private static func cancelApart(_ task: URLSessionDataTask) {
        DispatchQueue.global().async { task.cancel() }
    }
}
