@testable import Ferry
import FerryHTTP
import Logging
import Testing

/// The request observer alone in a middleware chain, over a router with stand-in routes.
@Suite struct RequestObserverTests {
    @Test func answeredChangesPollsAreCounted() throws {
        var router = Router()
        router.get("/v1/changes") { request, _ in
            HTTPResponse(status: request.headers["If-None-Match"] == nil ? 200 : 304)
        }
        router.get("/v1/:resource") { _, _ in HTTPResponse(status: 200) }
        let metrics = FerryMetrics()
        let observer = MiddlewareChain(
            middleware: [RequestObserver(metrics: metrics, logger: Logger(label: "test"))], router: router, logger: Logger(label: "test"))
        let context = RequestContext(requestID: "r", remoteAddress: "127.0.0.1:1", logger: Logger(label: "test"))
        func get(_ path: String, _ headers: [(String, String)] = []) -> Int {
            observer.respond(to: HTTPRequest(method: "GET", target: path, path: path, headers: HTTPHeaders(headers)), context: context).status
        }
        #expect(get("/v1/changes") == 200)
        #expect(get("/v1/changes", [("If-None-Match", "\"c\"")]) == 304)
        #expect(get("/v1/terms") == 200)
        #expect(get("/v1/changes/extra") == 404)
        #expect(metrics.changesPolls.value == 2)
        #expect(metrics.requests.count(route: "/v1/:resource", method: "GET", status: 200) == 1)
        #expect(metrics.requests.count(route: "(unmatched)", method: "GET", status: 404) == 1)
    }

    /// Probes every few seconds would be most of the log: their lines go at debug.
    @Test func healthProbesAreLoggedAtDebugAndEverythingElseAtInfo() {
        var router = Router()
        router.get("/healthz") { _, _ in .text("ok") }
        router.get("/readyz") { _, _ in .text("ok") }
        router.get("/v1/:resource") { _, _ in HTTPResponse(status: 200) }
        let context = RequestContext(requestID: "r", remoteAddress: "127.0.0.1:1", logger: Logger(label: "test"))
        func lines(at level: Logger.Level) -> [String] {
            let events = RecordingLogHandler.Events()
            let logger = Logger(label: "t") { _ in RecordingLogHandler(events: events, logLevel: level) }
            let metrics = FerryMetrics()
            let observer = MiddlewareChain(middleware: [RequestObserver(metrics: metrics, logger: logger)], router: router, logger: logger)
            for path in ["/healthz", "/readyz", "/v1/terms"] {
                _ = observer.respond(to: HTTPRequest(method: "GET", target: path, path: path, headers: HTTPHeaders()), context: context)
            }
            #expect(metrics.requests.count(route: "/healthz", method: "GET", status: 200) == 1, "probes are still counted")
            return events.events.withLock { $0 }.map { $0.1["route"]?.description ?? "-" }
        }
        #expect(lines(at: .info) == ["/v1/:resource"])
        #expect(lines(at: .debug) == ["/healthz", "/readyz", "/v1/:resource"])
    }
}
