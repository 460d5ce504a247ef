import FerryKit
import Foundation

/// A server that is only a script: each write (POST, PATCH, DELETE) takes the
/// next scripted answer, or no answer at all; reads get an empty world (an
/// empty feed, empty Index pages, then 304), except the streams given pages
/// with ``serve(stream:pages:)``. For the engine's retry table, where each row
/// needs an exact answer that a real server gives only by chance, and a fixed
/// clock; and for the order in which subscriptions download.
final class ScriptedTransport: Transport {
    enum Answer: Sendable {
        /// No answer: the connection failed.
        case noAnswer
        case respond(TransportResponse)
    }

    private let state = Locked<(script: [Answer], writes: [TransportRequest])>(([], []))
    /// Per stream (`set:<id>`), its pages; and every read's path, in order.
    private let reading = Locked<(streams: [String: [String]], reads: [String], offline: Bool)>(([:], [], false))
    /// Runs while each write waits for its answer (the engine is suspended in it).
    let whileSending: (@Sendable (TransportRequest) async -> Void)?
    /// Runs while each read waits for its answer.
    let whileReading: (@Sendable (TransportRequest) async -> Void)?

    init(
        whileSending: (@Sendable (TransportRequest) async -> Void)? = nil, whileReading: (@Sendable (TransportRequest) async -> Void)? = nil
    ) {
        self.whileSending = whileSending
        self.whileReading = whileReading
    }

    /// `GET /v1/changes?stream=<stream>` answers these pages, one per
    /// request: the first without `since`, page k+1 after cursor `<stream>#k`;
    /// past the last, no changes (304 to `If-None-Match`). Each page is its
    /// `changes` array as JSON.
    func serve(stream: String, pages: [String]) { reading.withLock { $0.streams[stream] = pages } }

    /// `GET /v1/changes?stream=<stream>` answers 400 `invalid_query`, as for a stream name the server does not declare.
    func refuse(stream: String) { reading.withLock { $0.streams[stream] = [Self.refused] } }

    static let refused = "400"

    /// A cursor every stream answers 410 `cursor_expired` to (behind the server's purge horizon).
    static let expired = "expired"

    /// Every read sent, in order (path and query).
    var reads: [String] { reading.withLock { $0.reads } }

    /// While true, no request gets an answer.
    var offline: Bool {
        get { reading.withLock { $0.offline } }
        set { reading.withLock { $0.offline = newValue } }
    }

    func script(_ answers: Answer...) { state.withLock { $0.script += answers } }

    /// `GET /v1/users/lookup` takes these answers in turn (none left: no answer).
    private let lookups = Locked<(script: [Answer], sent: [TransportRequest])>(([], []))
    func scriptLookups(_ answers: Answer...) { lookups.withLock { $0.script += answers } }
    /// The lookups that were sent, in order, with their headers.
    var lookupsSent: [TransportRequest] { lookups.withLock { $0.sent } }

    /// The writes that were sent, in order.
    var writes: [TransportRequest] { state.withLock { $0.writes } }
    /// Scripted answers not used yet.
    var unused: Int { state.withLock { $0.script.count } }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        guard !offline else { throw TransportFailure("scripted: offline") }
        if request.method == "GET", request.path.hasPrefix("/v1/users/lookup") {
            let answer: Answer? = lookups.withLock { state in
                state.sent.append(request)
                return state.script.isEmpty ? nil : state.script.removeFirst()
            }
            guard case .respond(let response)? = answer else { throw TransportFailure("scripted: no answer to the lookup") }
            return response
        }
        // One wait on several streams: a scripted server has no news to tell (its streams are read by their pages).
        if request.method == "POST", request.path == "/v1/changes/wait" {
            reading.withLock { $0.reads.append(request.path) }
            return Self.json(200, #"{"changed":[]}"#)
        }
        guard request.method != "GET" else {
            await whileReading?(request)
            return reading.withLock { state in
                state.reads.append(request.path)
                return Self.read(request, streams: state.streams)
            }
        }
        await whileSending?(request)
        let answer: Answer? = state.withLock { state in
            state.writes.append(request)
            return state.script.isEmpty ? nil : state.script.removeFirst()
        }
        switch answer {
        case .respond(let response)?: return response
        case .noAnswer?: throw TransportFailure("scripted: no answer")
        case nil: throw TransportFailure("scripted: nothing left in the script for \(request.method) \(request.path)")
        }
    }

    static func read(_ request: TransportRequest, streams: [String: [String]] = [:]) -> TransportResponse {
        let query = Dictionary(
            (request.path.split(separator: "?").dropFirst().first ?? "").split(separator: "&").map {
                (String($0.prefix { $0 != "=" }), String($0.drop { $0 != "=" }.dropFirst()).removingPercentEncoding ?? "")
            }, uniquingKeysWith: { $1 })
        if request.path.hasPrefix("/v1/changes"), let stream = query["stream"] {
            guard let pages = streams[stream] else { return json(200, #"{"changes":[],"cursor":"\#(stream)#0","has_more":false}"#) }
            if query["since"] == expired {
                return json(410, #"{"code":"cursor_expired","status":410,"title":"cursor_expired"}"#)
            }
            if pages == [refused] {
                return json(400, #"{"code":"invalid_query","status":400,"title":"invalid_query","detail":"no stream named \#(stream)"}"#)
            }
            let page = query["since"].flatMap { $0.split(separator: "#").last.flatMap { Int($0) } } ?? 0
            guard page < pages.count else {
                if request.headers["If-None-Match"] != nil { return TransportResponse(status: 304) }
                return json(200, #"{"changes":[],"cursor":"\#(stream)#\#(page)","has_more":false}"#)
            }
            return json(200, #"{"changes":\#(pages[page]),"cursor":"\#(stream)#\#(page + 1)","has_more":\#(page + 1 < pages.count)}"#)
        }
        if request.path.hasPrefix("/v1/changes") {
            if request.headers["If-None-Match"] != nil { return TransportResponse(status: 304) }
            return json(200, #"{"changes":[],"cursor":"c0","has_more":false}"#)
        }
        return json(200, #"{"data":[],"paging":{"token":null,"page":1,"pages":1,"total":0,"next":null}}"#)
    }

    static func json(_ status: Int, _ body: String, headers: [String: String] = [:]) -> TransportResponse {
        TransportResponse(status: status, headers: headers.merging(["Content-Type": "application/json"]) { a, _ in a }, body: Data(body.utf8))
    }
}
