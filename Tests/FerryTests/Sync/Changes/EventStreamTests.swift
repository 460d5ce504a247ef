import Ferry
import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Testing

/// A server-sent event stream read off the wire: the events' fields, one event
/// at a time, with comments (heartbeats) counted.
final class EventStreamReader {
    struct Event {
        var id: String?
        var event: String?
        var data = ""
        var retry: Int?
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(data.utf8))) as? [String: Any] ?? [:] }
    }

    let client: TestHTTPClient
    let head: TestHTTPClient.Response
    private var pending = ""
    private(set) var comments = 0
    private(set) var ended = false

    init(port: Int, token: String, query: String = "", headers: [(String, String)] = []) throws {
        client = try TestHTTPClient(connectingTo: port, timeout: 60)
        var request = "GET /v1/changes\(query) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\nAccept: text/event-stream\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        try client.send(request + "\r\n")
        head = try client.readStreamHead()
    }

    /// The next event that carries data or a retry, skipping comments.
    func next() throws -> Event {
        var event = Event()
        var hasField = false
        while true {
            guard let newline = pending.firstIndex(of: "\n") else {
                guard let chunk = try client.readChunk() else {
                    ended = true
                    throw FeedFollower.Failure(description: "the stream ended")
                }
                pending += String(decoding: chunk, as: UTF8.self)
                continue
            }
            let line = String(pending[..<newline])
            pending.removeSubrange(...newline)
            if line.isEmpty {
                if hasField { return event }
                continue
            }
            if line.hasPrefix(":") {
                comments += 1
                continue
            }
            hasField = true
            let (name, value) =
                line.firstIndex(of: ":").map {
                    (String(line[..<$0]), String(line[line.index(after: $0)...].drop { $0 == " " }))
                } ?? (line, "")
            switch name {
            case "id": event.id = value
            case "event": event.event = value
            case "data": event.data += (event.data.isEmpty ? "" : "\n") + value
            case "retry": event.retry = Int(value)
            default: break
            }
        }
    }

    /// The next `changes` event (after the stream's `retry`).
    func nextChanges() throws -> Event {
        while true {
            let event = try next()
            if event.event == "changes" || event.event == "problem" { return event }
        }
    }

    /// Reads until the stream's last chunk; the events read meanwhile.
    func readToEnd() throws -> [Event] {
        var events: [Event] = []
        do {
            while true { events.append(try next()) }
        } catch  where ended {
            return events
        }
    }
}

extension ChangesSuites {
    /// `Accept: text/event-stream` on `/v1/changes`: a page per event, each
    /// `id` its cursor, `Last-Event-ID` to resume, heartbeats while quiet.
    @Suite struct EventStreamTests {
        static func ids(_ event: EventStreamReader.Event, _ resource: String) -> Set<String> {
            changedIDs(event.json, resource)
        }

        @Test func aStreamSendsAPageAtOnceThenEachCommitAsItComes() throws {
            let server = try TestServer { $0.live.heartbeatSeconds = 0.2 }
            defer { server.stop() }
            let alice = try server.user("alice")
            let set = try server.makeSet(for: alice.id)
            let feed = FeedFollower(server: server, token: alice.token)
            try feed.catchUp(pastXID: try server.maxXID())
            let stream = try EventStreamReader(port: server.port, token: alice.token, query: "?since=\(feed.cursor ?? "")")
            #expect(stream.head.status == 200)
            #expect(stream.head.header("Content-Type") == "text/event-stream; charset=utf-8")
            #expect(stream.head.header("Cache-Control") == "no-store")
            #expect(stream.head.header("Transfer-Encoding") == "chunked")
            #expect(stream.head.header("Content-Encoding") == nil)
            #expect(try stream.next().retry == 1_000)
            // The first page at once, empty: the stream is live, and its cursor is known.
            let first = try stream.nextChanges()
            #expect(first.id == first.json["cursor"] as? String)
            #expect((first.json["changes"] as? [Any])?.isEmpty == true)
            try server.waitForWaiters(1)
            let term = try server.createTerm(in: set, word: "live", token: alice.token)
            let second = try stream.nextChanges()
            #expect(Self.ids(second, "terms") == [term])
            #expect(second.id == second.json["cursor"] as? String)
            #expect(second.id != first.id)
            // Its data is the page exactly as a poll from the same cursor answers it: compact JSON, byte for byte.
            let poll = try server.client().request(
                "GET", "/v1/changes?since=\(first.id ?? "")", headers: [("Authorization", "Bearer \(alice.token)")])
            #expect(poll.status == 200)
            // Up to the cursor, which may differ: a later poll's may be past the same entries (the frontier moved on).
            let entries = { (page: String) in page.components(separatedBy: ",\"cursor\":").first ?? "" }
            #expect(entries(second.data) == entries(poll.text) && !entries(poll.text).isEmpty)
            #expect(!second.data.contains(" : "))
            // Quiet: heartbeat comments, nothing else.
            #expect(try stream.client.readChunk() == Array(":\n\n".utf8))
            #expect(try stream.client.readChunk() == Array(":\n\n".utf8))
        }

        @Test func aStreamSinceNowStartsAtThisMomentNotFromTheBeginning() throws {
            let server = try TestServer()
            defer { server.stop() }
            let alice = try server.user("alice")
            let set = try server.makeSet(for: alice.id)
            let before = try server.createTerm(in: set, word: "before", token: alice.token)
            let stream = try EventStreamReader(port: server.port, token: alice.token, query: "?since=now")
            // The first event is empty and carries this moment's cursor: nothing written before is sent again.
            let first = try stream.nextChanges()
            #expect((first.json["changes"] as? [Any])?.isEmpty == true)
            #expect(first.json["has_more"] as? Bool == false)
            try server.waitForWaiters(1)
            let after = try server.createTerm(in: set, word: "after", token: alice.token)
            var received: Set<String> = []
            while !received.contains(after) { received.formUnion(Self.ids(try stream.nextChanges(), "terms")) }
            #expect(!received.contains(before))
        }

        @Test func lastEventIDResumesAfterTheEvent() throws {
            let server = try TestServer()
            defer { server.stop() }
            let alice = try server.caughtUpUser("alice")
            let set = try server.makeSet(for: alice.id)
            let stream = try EventStreamReader(port: server.port, token: alice.token, query: "?since=\(alice.cursor)")
            let first = try stream.nextChanges()
            stream.client.close()
            try server.waitForWaiters(0)
            // Written while the client was away.
            let term = try server.createTerm(in: set, word: "missed", token: alice.token)
            // The browser reconnects to the same URL, with the last id it got: the stream goes on from there.
            let again = try EventStreamReader(
                port: server.port, token: alice.token, query: "?since=\(alice.cursor)",
                headers: [("Last-Event-ID", first.id ?? "")])
            var received: Set<String> = []
            while received.isEmpty { received = Self.ids(try again.nextChanges(), "terms") }
            #expect(received == [term])
            let bad = try server.client().request(
                "GET", "/v1/changes",
                headers: [
                    ("Authorization", "Bearer \(alice.token)"), ("Accept", "text/event-stream"), ("Last-Event-ID", "nonsense"),
                ])
            #expect(bad.status == 400)
            #expect(bad.object["code"] as? String == "invalid_query")
        }

        @Test func aStreamEndsAtItsLongestAndAtShutdown() throws {
            let server = try TestServer { $0.live.maxStreamSeconds = 0.5 }
            defer { server.stop() }
            let alice = try server.user("alice")
            let short = try EventStreamReader(port: server.port, token: alice.token, query: "?since=now")
            let events = try short.readToEnd()
            #expect(events.contains { $0.event == "changes" })
            #expect(short.ended)
            // Keep-alive: the connection serves the next request.
            try short.client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try short.client.readResponse().status == 200)

            let other = try TestServer()
            defer { other.stop() }
            let bob = try other.user("bob")
            let stream = try EventStreamReader(port: other.port, token: bob.token)
            _ = try stream.nextChanges()
            try other.waitForWaiters(1)
            other.server.beginShutdown()
            _ = try stream.readToEnd()
            #expect(stream.ended)
        }

        @Test func anErrorMidStreamIsAProblemEventThatEndsIt() throws {
            let server = try TestServer()
            defer { server.stop() }
            let alice = try server.user("alice")
            let stream = try EventStreamReader(port: server.port, token: alice.token)
            _ = try stream.nextChanges()
            try server.waitForWaiters(1)
            // The token is revoked; the next part finds out.
            #expect(
                try server.client().request(
                    "DELETE", "/v1/auth/token",
                    headers: [("Authorization", "Bearer \(alice.token)")]
                ).status == 204)
            _ = try server.makeSet(for: alice.id)
            let problem = try stream.nextChanges()
            #expect(problem.event == "problem")
            #expect(problem.json["status"] as? Int == 401)
            _ = try stream.readToEnd()
            #expect(stream.ended)
            #expect(server.app.live.waiters == 0)
        }

        @Test func aStreamRefusedBeforeItStartsIsAPlainProblem() throws {
            let server = try TestServer { $0.live.maxWaitersPerUser = 1 }
            defer { server.stop() }
            let alice = try server.user("alice")
            let stream = try EventStreamReader(port: server.port, token: alice.token)
            _ = try stream.nextChanges()
            try server.waitForWaiters(1)
            let second = try server.client().request(
                "GET", "/v1/changes",
                headers: [
                    ("Authorization", "Bearer \(alice.token)"), ("Accept", "text/event-stream"),
                ])
            #expect(second.status == 429)
            #expect(second.header("Content-Type") == "application/problem+json")
            let anonymous = try server.client().request("GET", "/v1/changes", headers: [("Accept", "text/event-stream")])
            #expect(anonymous.status == 401)
        }
    }
}
