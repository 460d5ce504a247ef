import FerryKit

/// The app's own airplane mode: while it is on, every request fails here
/// without touching the network, exactly as if the cable were out. FerryKit
/// cannot tell the difference, which is the point: the offline path the app
/// shows is the real one (writes land locally, sync fails and says why, the
/// outbox waits), not a simulation of it.
///
/// A request already on its way when the switch flips gets no answer either,
/// as with a pulled cable: above all the live engine's long poll, which would
/// otherwise bring other devices' edits into an "offline" app. (A write the
/// server applied meanwhile is sent again under its `Idempotency-Key`, and
/// replayed.)
///
/// An actor because the REPL flips the switch while a sync may be sending on
/// another task.
actor OfflineTransport: Transport {
    let inner: any Transport
    private(set) var isOffline = false

    static let reason = "offline (ferry-notes' `offline` switch; `online` to reconnect)"

    init(_ inner: any Transport) { self.inner = inner }

    func setOffline(_ offline: Bool) { isOffline = offline }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        guard !isOffline else { throw TransportFailure(Self.reason) }
        let response: TransportResponse
        do {
            response = try await inner.send(request)
        } catch {
            throw isOffline ? TransportFailure(Self.reason) : error
        }
        guard !isOffline else { throw TransportFailure(Self.reason) }
        return response
    }
}
