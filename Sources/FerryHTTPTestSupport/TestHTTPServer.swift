import FerryHTTP
import Foundation
import Logging

/// The one place a test starts an ``HTTPServer``: on a port the kernel picks, so that
/// tests running at once never collide, started before it is handed back. Stop it with
/// `shutdown()`. Ferry's in-process servers (FerryTestSupport's `TestServer`) come up
/// through ``start(_:make:)``; FerryHTTP's wire tests, which build without libpq or
/// libmemcached, through ``start(limits:ioThreads:workerThreads:host:responder:compression:)``
/// with the routes of ``router()``.
public enum TestHTTPServer {
    /// Starts the server `make` builds from `configuration` moved to a free port.
    /// `make` is there for servers that must be built by their owner (Ferry's app
    /// watches the server it makes for its metrics).
    public static func start(
        _ configuration: HTTPServerConfiguration, make: (HTTPServerConfiguration) -> HTTPServer
    ) throws -> HTTPServer {
        var configuration = configuration
        configuration.port = 0
        let server = make(configuration)
        try server.start()
        return server
    }

    /// An HTTP-only server answering with `responder` (``router()`` unless given),
    /// with the wire tests' small limits unless given, logging warnings and worse.
    public static func start(
        limits: HTTPLimits = TestHTTPServer.limits(), ioThreads: Int = 2, workerThreads: Int = 4, host: String = "127.0.0.1",
        responder: (any HTTPResponder)? = nil, compression: HTTPCompression = HTTPCompression()
    ) throws -> HTTPServer {
        var logger = Logger(label: "test")
        logger.logLevel = .warning
        let configuration = HTTPServerConfiguration(
            host: host, port: 0, limits: limits, ioThreads: ioThreads, workerThreads: workerThreads,
            compression: compression, serverName: "test-server", threadNamePrefix: "test", refusal: refusal)
        return try start(configuration) { HTTPServer(configuration: $0, responder: responder ?? router(), logger: logger) }
    }

    /// Limits small enough for a wire test to reach each of them with a few bytes.
    public static func limits(_ change: (inout HTTPLimits) -> Void = { _ in }) -> HTTPLimits {
        var limits = HTTPLimits()
        limits.maxRequestLineBytes = 1024
        limits.maxHeaderBytes = 2048
        limits.maxBodyBytes = 4096
        change(&limits)
        return limits
    }

    /// The application's refusal the wire tests install: the plain problem plus the
    /// refusal's reason as a member, so a test sees which reason the server gave.
    public static let refusal: HTTPRefusal = { error in
        .problem(
            status: error.status, detail: error.detail, extensions: [("reason", .string("\(error.reason)"))],
            headers: error.headers)
    }

    /// The wire tests' routes.
    public static func router() -> Router {
        var router = Router(refusal: refusal)
        router.get("/healthz", inline: true) { _, _ in .text("ok") }
        router.get("/slow") { request, _ in
            let millis = Int(request.queryValue("ms") ?? "1000") ?? 1000
            // A real sleep: a handler that holds its worker is what the timing tests exercise.
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
            HTTPResponse(
                body: .stream { writer in
                    for i in 0..<5 { try writer.write("part\(i);") }
                })
        }
        return router
    }
}
