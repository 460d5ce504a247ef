import FerryHTTPTestSupport
import FerryKit
import Foundation

/// A transport over the tests' raw-socket HTTP/1.1 client, with no Foundation
/// networking in the way: the soak runs its devices on it
/// (`FERRY_SIM_TRANSPORT=socket`) to tell FerryKit's memory from URLSession's,
/// which on Linux keeps some 200 bytes per request (`bench/soak/leaks.sh`).
/// It sends no `Accept-Encoding`, so answers come uncompressed.
///
/// `@unchecked Sendable`: its client is used only on `queue`, one request at a time.
///
/// ``chosen(baseURL:timeout:)`` is what the simulation and its harness use: this
/// transport under `FERRY_SIM_TRANSPORT=socket`, so that the soak's process makes no
/// URLSession request at all, and URLSessionTransport otherwise.
final class SocketTransport: Transport, @unchecked Sendable {
    private let client: TestHTTPClient
    private let queue = DispatchQueue(label: "SocketTransport")

    init(baseURL: URL, timeout: Double = 10) {
        client = TestHTTPClient(port: baseURL.port ?? 80, timeout: timeout)
    }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { [self] in
                do {
                    let answer = try client.request(
                        request.method, request.path, headers: request.headers.map { ($0.key, $0.value) },
                        body: request.body.map { Array($0) })
                    var headers: [String: String] = [:]
                    for field in answer.headers where headers[field.name] == nil { headers[field.name] = field.value }
                    continuation.resume(returning: TransportResponse(status: answer.status, headers: headers, body: Data(answer.body)))
                } catch {
                    // The connection's state is unknown after a failure: the next request opens a new one.
                    client.close()
                    continuation.resume(throwing: TransportFailure("\(error)"))
                }
            }
        }
    }

    /// The transport the simulation's devices and checks use (see the type's comment).
    static func chosen(baseURL: URL, timeout: Double = 10) -> any Transport {
        ProcessInfo.processInfo.environment["FERRY_SIM_TRANSPORT"] == "socket"
            ? SocketTransport(baseURL: baseURL, timeout: timeout) : URLSessionTransport(baseURL: baseURL, timeout: timeout)
    }
}
