import FerryKit
import Foundation
import Synchronization

/// A transport between a device and the server that fails on command: for
/// tests that need a request dropped, its answer lost after the server applied
/// it, or a 503, at a chosen moment.
final class FaultyTransport: Transport {
    enum Fault: Sendable, Equatable {
        /// The request never reaches the server.
        case dropRequest
        /// The server applies the request; its answer is lost.
        case dropResponse
        /// The server is not asked; the device sees 503 with `Retry-After: 0`.
        case serviceUnavailable
        /// The server is not asked; the device sees this answer (an expired
        /// paging snapshot, say, without waiting out its TTL).
        case answer(TransportResponse)
    }

    let inner: any Transport
    private let state = Mutex<
        (
            faults: [(match: @Sendable (TransportRequest) -> Bool, fault: Fault)], sent: [TransportRequest], offline: Bool,
            answers: [TransportResponse]
        )
    >(([], [], false, []))

    init(_ inner: any Transport) { self.inner = inner }

    /// The next request that `match` accepts gets `fault`, once.
    func inject(_ fault: Fault, when match: @escaping @Sendable (TransportRequest) -> Bool) {
        state.withLock { $0.faults.append((match, fault)) }
    }

    /// While offline every request fails without reaching the server.
    func setOffline(_ offline: Bool) { state.withLock { $0.offline = offline } }

    /// Every request that reached the server, in order.
    var delivered: [TransportRequest] { state.withLock { $0.sent } }
    /// The answers the device received, in order.
    var answers: [TransportResponse] { state.withLock { $0.answers } }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        let fault: Fault? = state.withLock { state in
            if state.offline { return .dropRequest }
            guard let index = state.faults.firstIndex(where: { $0.match(request) }) else { return nil }
            return state.faults.remove(at: index).fault
        }
        switch fault {
        case .dropRequest?:
            throw TransportFailure("request dropped")
        case .serviceUnavailable?:
            return TransportResponse(status: 503, headers: ["Retry-After": "0"], body: Data(#"{"code":"unavailable"}"#.utf8))
        case .answer(let response)?:
            return response
        case .dropResponse?:
            _ = try await inner.send(request)
            state.withLock { $0.sent.append(request) }
            throw TransportFailure("response lost")
        case nil:
            let response = try await inner.send(request)
            state.withLock {
                $0.sent.append(request); $0.answers.append(response)
            }
            return response
        }
    }
}
