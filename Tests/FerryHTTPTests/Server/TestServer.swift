import Dispatch
import Foundation
import FerryHTTP
import Logging

/// A server on a free loopback port with routes for the wire tests.
enum TestServer {
    static func limits(_ change: (inout HTTPLimits) -> Void = { _ in }) -> HTTPLimits {
        var limits = HTTPLimits()
        limits.maxRequestLineBytes = 1024
        limits.maxHeaderBytes = 2048
        limits.maxBodyBytes = 4096
        change(&limits)
        return limits
    }

    /// The application's refusal the tests install: the plain problem plus the
    /// refusal's reason as a member, so a test sees which reason the server gave.
    static let refusal: HTTPRefusal = { error in
        .problem(
            status: error.status, detail: error.detail, extensions: [("reason", .string("\(error.reason)"))],
            headers: error.headers)
    }

    static func router() -> Router {
        var router = Router(refusal: refusal)
        router.get("/healthz", inline: true) { _, _ in .text("ok") }
        router.get("/slow") { request, _ in
            let millis = Int(request.queryValue("ms") ?? "1000") ?? 1000
            usleep(UInt32(millis * 1000))
            return .text("slow done")
        }
        router.post("/echo") { request, _ in
            HTTPResponse(status: 200, headers: HTTPHeaders([("Content-Type", "application/octet-stream")]), bytes: request.body)
        }
        router.get("/v1/:resource/:id") { _, context in
            .text("param \(context.parameters["resource"] ?? "?") \(context.parameters["id"] ?? "?") \(context.routePattern ?? "")")
        }
        router.get("/v1/users/me") { _, context in .text("literal \(context.routePattern ?? "")") }
        router.delete("/v1/:resource/:id") { _, _ in HTTPResponse(status: 204) }
        router.get("/id") { _, context in .text(context.requestID) }
        router.get("/unsafe-header") { _, _ in
            HTTPResponse(status: 200, headers: HTTPHeaders([("X-Echo", "a\r\nInjected: yes\u{0}z\n")]), bytes: Array("ok".utf8))
        }
        router.get("/throws") { _, _ in throw CancellationError() }
        router.get("/conflict") { _, _ in
            throw HTTPError(status: 409, detail: "stale", closeConnection: false)
        }
        router.get("/big") { _, _ in HTTPResponse(bytes: [UInt8](repeating: 65, count: 100_000)) }
        router.get("/huge") { _, _ in HTTPResponse(bytes: [UInt8](repeating: 66, count: 32 << 20)) }
        router.get("/stream") { _, _ in
            HTTPResponse(body: .stream { writer in
                for i in 0..<5 { try writer.write("part\(i);") }
            })
        }
        return router
    }

    static func start(
        limits: HTTPLimits = TestServer.limits(), ioThreads: Int = 2, workerThreads: Int = 4,
        responder: (any HTTPResponder)? = nil, compression: HTTPCompression = HTTPCompression()
    ) throws -> HTTPServer {
        var logger = Logger(label: "test")
        logger.logLevel = .warning
        let configuration = HTTPServerConfiguration(
            host: "127.0.0.1", port: 0, limits: limits, ioThreads: ioThreads, workerThreads: workerThreads,
            compression: compression, serverName: "test-server", threadNamePrefix: "test", refusal: refusal)
        let server = HTTPServer(configuration: configuration, responder: responder ?? router(), logger: logger)
        try server.start()
        return server
    }
}

/// Runs a blocking closure on a background thread and waits for its result later.
final class Background<T: Sendable>: @unchecked Sendable {
    // Guarded by `done`: `value` is written before the signal and read after the wait.
    private var value: T?
    private let done = DispatchSemaphore(value: 0)

    init(_ body: @escaping @Sendable () -> T) {
        DispatchQueue.global().async {
            self.value = body()
            self.done.signal()
        }
    }

    func wait(seconds: Double = 10) -> T? {
        guard done.wait(timeout: .now() + seconds) == .success else { return nil }
        return value
    }
}
