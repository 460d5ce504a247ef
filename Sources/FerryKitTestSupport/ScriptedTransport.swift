import FerryKit
import Foundation
import Synchronization

/// A server that is only a script: each write (POST, PATCH, DELETE) takes the
/// next scripted answer, or no answer at all; reads get an empty world (an
/// empty feed, empty Index pages, then 304). For the engine's retry table,
/// where each row needs an exact answer that a real server gives only by
/// chance, and a fixed clock.
final class ScriptedTransport: Transport {
    enum Answer: Sendable {
        /// No answer: the connection failed.
        case noAnswer
        case respond(TransportResponse)
    }

    private let state = Mutex<(script: [Answer], writes: [TransportRequest])>(([], []))
    /// Runs while each write waits for its answer (the engine is suspended in it).
    let whileSending: (@Sendable (TransportRequest) async -> Void)?

    init(whileSending: (@Sendable (TransportRequest) async -> Void)? = nil) { self.whileSending = whileSending }

    func script(_ answers: Answer...) { state.withLock { $0.script += answers } }

    /// The writes that were sent, in order.
    var writes: [TransportRequest] { state.withLock { $0.writes } }
    /// Scripted answers not used yet.
    var unused: Int { state.withLock { $0.script.count } }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        guard request.method != "GET" else { return Self.read(request) }
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

    static func read(_ request: TransportRequest) -> TransportResponse {
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
