import FerryKit

/// The app's own airplane mode: while it is on, every request fails here
/// without touching the network, exactly as if the cable were out. FerryKit
/// cannot tell the difference, which is the point: the offline path the app
/// shows is the real one (writes land locally, sync fails and says why, the
/// outbox waits), not a simulation of it.
///
/// An actor because the REPL flips the switch while a sync may be sending on
/// another task; a request already on its way when the switch flips finishes.
actor OfflineTransport: Transport {
    let inner: any Transport
    private(set) var isOffline = false

    init(_ inner: any Transport) { self.inner = inner }

    func setOffline(_ offline: Bool) { isOffline = offline }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        guard !isOffline else { throw TransportFailure("offline (ferry-notes' `offline` switch; `online` to reconnect)") }
        return try await inner.send(request)
    }
}
