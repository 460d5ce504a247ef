@testable import Ferry
import FerryHTTP
import Logging
import Testing

/// The request observer on its own, over a router with stand-in routes.
@Suite struct RequestObserverTests {
    @Test func answeredChangesPollsAreCounted() throws {
        var router = Router()
        router.get("/v1/changes") { request, _ in
            HTTPResponse(status: request.headers["If-None-Match"] == nil ? 200 : 304)
        }
        router.get("/v1/:resource") { _, _ in HTTPResponse(status: 200) }
        let metrics = FerryMetrics()
        let observer = RequestObserver(router: router, inner: router, metrics: metrics, logger: Logger(label: "test"))
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
}
