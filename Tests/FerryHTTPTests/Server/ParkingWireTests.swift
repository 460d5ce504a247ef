import FerryBase
import FerryHTTP
import FerryHTTPTestSupport
import Foundation
import Synchronization
import Testing

/// Parked exchanges over real sockets: a long poll answered on a wake or at its
/// deadline, a wake that comes while the handler checks, a client that leaves,
/// shutdown, an open stream continued part by part with its heartbeat, and
/// parked exchanges holding no worker thread.
@Suite("Server: parked exchanges")
struct ParkingWireTests {
    /// The tickets the test routes parked, by the `name` query parameter, for the test to wake.
    final class Board: Sendable {
        private let tickets = Locked<[String: ParkingTicket]>([:])
        let abandoned = Atomic<Int>(0)
        /// Calls per name, resumptions included.
        private let calls = Locked<[String: Int]>([:])

        func put(_ name: String, _ ticket: ParkingTicket) {
            tickets.withLock { $0[name] = ticket }
            calls.withLock { $0[name, default: 0] += 1 }
            ticket.whenAbandoned { [self] in abandoned.add(1, ordering: .relaxed) }
        }

        func ticket(_ name: String) -> ParkingTicket? { tickets.withLock { $0[name] } }
        func calls(_ name: String) -> Int { calls.withLock { $0[name] ?? 0 } }

        /// Wakes `name` once it has parked (its ticket is on the board).
        func wake(_ name: String) throws {
            try waitFor("\(name) to park") { self.ticket(name) }.wake()
        }
    }

    /// `/park?name=N&deadline=S&stream=1&parts=K`: parks; answers how it was resumed.
    /// A stream sends `part-1`, `part-2`... one per call, and ends after `parts`.
    static func server(_ board: Board, workers: Int = 4, limits: HTTPLimits = TestHTTPServer.limits()) throws -> HTTPServer {
        var router = TestHTTPServer.router()
        router.get("/park") { request, context in
            let name = request.queryValue("name") ?? "x"
            guard let ticket = context.parkingTicket() else { return .text("cannot park", status: 500) }
            ticket.arm()
            board.put(name, ticket)
            if request.queryValue("wake-while-checking") == "1", context.resumption == nil {
                // A wake between the arm and the park: the loop must not hold the exchange.
                ticket.wake()
            }
            let deadline = request.queryValue("deadline").flatMap(Double.init).map { MonotonicClock.now() + $0 }
            if request.queryValue("stream") == "1" {
                let parts = Int(request.queryValue("parts") ?? "3") ?? 3
                let call = board.calls(name)
                let part = Array("part-\(call)\n".utf8)
                if call >= parts || context.resumption?.reason == .shutdown || context.resumption?.reason == .deadline {
                    return HTTPResponse(status: 200, bytes: part + Array("end:\(String(describing: context.resumption?.reason))\n".utf8))
                }
                let heartbeat = request.queryValue("heartbeat").flatMap(Double.init)
                    .map { HTTPParking.Heartbeat(interval: $0, bytes: Array(": beat\n".utf8)) }
                return .parked(
                    HTTPParking(
                        ticket: ticket, deadline: deadline,
                        stream: .init(bytes: part, heartbeat: heartbeat)),
                    headers: HTTPHeaders([("Content-Type", "text/event-stream")]))
            }
            switch context.resumption?.reason {
            case nil: return .parked(HTTPParking(ticket: ticket, deadline: deadline))
            case .woken: return .text("woken after \(board.calls(name)) calls")
            case .deadline: return .text("deadline")
            case .shutdown: return .text("shutdown")
            }
        }
        return try TestHTTPServer.start(limits: limits, workerThreads: workers, responder: router)
    }

    @Test func aParkedRequestIsAnsweredWhenWoken() throws {
        let board = Board()
        let server = try Self.server(board)
        defer { server.shutdown() }
        let client = try TestHTTPClient(connectingTo: server.port)
        try client.send("GET /park?name=a HTTP/1.1\r\nHost: x\r\n\r\n")
        _ = try waitFor("the request to park") { board.ticket("a") }
        #expect(!client.hasBytesWaiting())
        try board.wake("a")
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.text == "woken after 2 calls")
        // The connection goes on as usual.
        try client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.readResponse().text == "ok")
    }

    @Test func aParkedRequestIsAnsweredAtItsDeadline() throws {
        let board = Board()
        let server = try Self.server(board)
        defer { server.shutdown() }
        let client = try TestHTTPClient(connectingTo: server.port)
        let response = try client.request("GET", "/park?name=d&deadline=0.2")
        #expect(response.text == "deadline")
    }

    @Test func aWakeWhileTheHandlerChecksIsNotLost() throws {
        let board = Board()
        let server = try Self.server(board)
        defer { server.shutdown() }
        let client = try TestHTTPClient(connectingTo: server.port)
        // No deadline: only the remembered wake can answer it.
        let response = try client.request("GET", "/park?name=w&wake-while-checking=1")
        #expect(response.text == "woken after 2 calls")
    }

    @Test func wakesAfterTheAnswerDoNothing() throws {
        let board = Board()
        let server = try Self.server(board)
        defer { server.shutdown() }
        let client = try TestHTTPClient(connectingTo: server.port)
        try client.send("GET /park?name=late HTTP/1.1\r\nHost: x\r\n\r\n")
        try board.wake("late")
        #expect(try client.readResponse().text == "woken after 2 calls")
        board.ticket("late")?.wake()
        board.ticket("late")?.wake()
        try client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.readResponse().text == "ok")
        #expect(board.calls("late") == 2)
    }

    @Test func aClientThatLeavesAbandonsItsParkedExchange() throws {
        let board = Board()
        let server = try Self.server(board)
        defer { server.shutdown() }
        let client = try TestHTTPClient(connectingTo: server.port)
        try client.send("GET /park?name=gone HTTP/1.1\r\nHost: x\r\n\r\n")
        let ticket = try waitFor("the request to park") { board.ticket("gone") }
        client.close()
        try waitUntil("the exchange to be abandoned") { board.abandoned.load(ordering: .relaxed) == 1 }
        #expect(ticket.isAbandoned)
        try waitUntil("the connection to close") { server.openConnections == 0 }
        ticket.wake()
    }

    @Test func idleAndHeaderTimeoutsDoNotCutAParkedRequest() throws {
        let board = Board()
        let limits = TestHTTPServer.limits {
            $0.idleTimeoutSeconds = 0.1
            $0.headerTimeoutSeconds = 0.1
        }
        let server = try Self.server(board, limits: limits)
        defer { server.shutdown() }
        let client = try TestHTTPClient(connectingTo: server.port)
        try client.send("GET /park?name=slow HTTP/1.1\r\nHost: x\r\n\r\n")
        _ = try waitFor("the request to park") { board.ticket("slow") }
        // Several sweeps pass with the exchange parked.
        Thread.sleep(forTimeInterval: 0.5)
        try board.wake("slow")
        #expect(try client.readResponse().text == "woken after 2 calls")
    }

    @Test func parkedRequestsHoldNoWorker() throws {
        let board = Board()
        let server = try Self.server(board, workers: 2)
        defer { server.shutdown() }
        let clients = try (0..<20).map { _ in try TestHTTPClient(connectingTo: server.port) }
        for (index, client) in clients.enumerated() {
            try client.send("GET /park?name=p\(index) HTTP/1.1\r\nHost: x\r\n\r\n")
        }
        try waitUntil("all 20 to park") { (0..<20).allSatisfy { board.ticket("p\($0)") != nil } }
        // Two workers, twenty parked exchanges: a request that needs a worker still runs.
        let other = try TestHTTPClient(connectingTo: server.port)
        #expect(try other.request("GET", "/v1/sets/1").status == 200)
        for index in 0..<20 { try board.wake("p\(index)") }
        for client in clients { #expect(try client.readResponse().text == "woken after 2 calls") }
    }

    @Test func aPipelinedRequestWaitsForTheParkedOne() throws {
        let board = Board()
        let server = try Self.server(board)
        defer { server.shutdown() }
        let client = try TestHTTPClient(connectingTo: server.port)
        try client.send("GET /park?name=first HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        _ = try waitFor("the request to park") { board.ticket("first") }
        #expect(!client.hasBytesWaiting())
        try board.wake("first")
        #expect(try client.readResponse().text == "woken after 2 calls")
        #expect(try client.readResponse().text == "ok")
    }

    @Test func shutdownAnswersEveryParkedRequest() throws {
        let board = Board()
        let server = try Self.server(board)
        let clients = try (0..<5).map { _ in try TestHTTPClient(connectingTo: server.port) }
        for (index, client) in clients.enumerated() {
            try client.send("GET /park?name=s\(index) HTTP/1.1\r\nHost: x\r\n\r\n")
        }
        try waitUntil("all 5 to park") { (0..<5).allSatisfy { board.ticket("s\($0)") != nil } }
        let stopped = Background { server.shutdown() }
        for client in clients {
            let response = try client.readResponse()
            #expect(response.text == "shutdown")
            #expect(response.header("Connection") == "close")
        }
        #expect(stopped.wait() != nil)
    }

    @Test func anOpenStreamSendsEachPartAsItComes() throws {
        let board = Board()
        let server = try Self.server(board)
        defer { server.shutdown() }
        let client = try TestHTTPClient(connectingTo: server.port)
        try client.send("GET /park?name=st&stream=1&parts=3 HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n")
        let head = try client.readStreamHead()
        #expect(head.status == 200)
        #expect(head.header("Transfer-Encoding") == "chunked")
        #expect(head.header("Content-Type") == "text/event-stream")
        #expect(head.header("Content-Encoding") == nil)
        #expect(try client.readChunk() == Array("part-1\n".utf8))
        try board.wake("st")
        #expect(try client.readChunk() == Array("part-2\n".utf8))
        try board.wake("st")
        #expect(try client.readChunk() == Array("part-3\nend:Optional(FerryHTTP.Resumption.Reason.woken)\n".utf8))
        #expect(try client.readChunk() == nil)
        // Keep-alive: the stream ended cleanly.
        try client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.readResponse().text == "ok")
    }

    @Test func aQuietStreamSendsItsHeartbeat() throws {
        let board = Board()
        let server = try Self.server(board)
        defer { server.shutdown() }
        let client = try TestHTTPClient(connectingTo: server.port)
        try client.send("GET /park?name=hb&stream=1&parts=9&heartbeat=0.05 HTTP/1.1\r\nHost: x\r\n\r\n")
        _ = try client.readStreamHead()
        #expect(try client.readChunk() == Array("part-1\n".utf8))
        #expect(try client.readChunk() == Array(": beat\n".utf8))
        #expect(try client.readChunk() == Array(": beat\n".utf8))
    }

    @Test func aStreamToAnHTTP10ClientEndsWithTheConnection() throws {
        let board = Board()
        let server = try Self.server(board)
        defer { server.shutdown() }
        let client = try TestHTTPClient(connectingTo: server.port)
        try client.send("GET /park?name=old&stream=1&parts=2 HTTP/1.0\r\nHost: x\r\n\r\n")
        let head = try client.readStreamHead()
        #expect(head.header("Transfer-Encoding") == nil)
        #expect(head.header("Connection") == "close")
        var body = try client.readSome()
        try board.wake("old")
        while true {
            let more = try client.readSome()
            if more.isEmpty { break }
            body += more
        }
        #expect(String(decoding: body, as: UTF8.self) == "part-1\npart-2\nend:Optional(FerryHTTP.Resumption.Reason.woken)\n")
    }

    @Test func shutdownEndsAnOpenStream() throws {
        let board = Board()
        let server = try Self.server(board)
        let client = try TestHTTPClient(connectingTo: server.port)
        try client.send("GET /park?name=sd&stream=1&parts=9 HTTP/1.1\r\nHost: x\r\n\r\n")
        _ = try client.readStreamHead()
        #expect(try client.readChunk() == Array("part-1\n".utf8))
        let stopped = Background { server.shutdown() }
        #expect(try client.readChunk() == Array("part-2\nend:Optional(FerryHTTP.Resumption.Reason.shutdown)\n".utf8))
        #expect(try client.readChunk() == nil)
        #expect(stopped.wait() != nil)
    }

    @Test func aStreamAtItsDeadlineEnds() throws {
        let board = Board()
        let server = try Self.server(board)
        defer { server.shutdown() }
        let client = try TestHTTPClient(connectingTo: server.port)
        try client.send("GET /park?name=dl&stream=1&parts=9&deadline=0.2 HTTP/1.1\r\nHost: x\r\n\r\n")
        _ = try client.readStreamHead()
        #expect(try client.readChunk() == Array("part-1\n".utf8))
        #expect(try client.readChunk() == Array("part-2\nend:Optional(FerryHTTP.Resumption.Reason.deadline)\n".utf8))
        #expect(try client.readChunk() == nil)
    }

    @Test func aHEADOfAStreamGetsItsHeadAndNoBody() throws {
        let board = Board()
        let server = try Self.server(board)
        defer { server.shutdown() }
        let client = try TestHTTPClient(connectingTo: server.port)
        try client.send("HEAD /park?name=h&stream=1 HTTP/1.1\r\nHost: x\r\n\r\n")
        let response = try client.readResponse(head: true)
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == "text/event-stream")
        try client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.readResponse().text == "ok")
        #expect(board.abandoned.load(ordering: .relaxed) == 1)
    }
}
