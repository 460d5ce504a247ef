import FerryKit
import Foundation

/// The app's own airplane mode: while it is on, every request fails here
/// without touching the network, exactly as if the cable were out. FerryKit
/// cannot tell the difference, which is the point: the offline path the app
/// shows is the real one (writes land locally, sync fails and says why, the
/// outbox waits), not a simulation of it.
///
/// Going offline also cuts the requests on their way, as a cable pulled
/// does: the live engine's long poll above all, which would otherwise bring
/// other devices' edits into an "offline" app. Each is cancelled, and an
/// answer that comes anyway is dropped (a write the server applied is then
/// sent again under its `Idempotency-Key`, and replayed).
///
/// An actor because the REPL flips the switch while a sync may be sending on
/// another task.
actor OfflineTransport: Transport {
    let inner: any Transport
    private(set) var isOffline = false
    private var inFlight: [UUID: Task<TransportResponse, any Error>] = [:]

    static let reason = "offline (ferry-notes' `offline` switch; `online` to reconnect)"

    init(_ inner: any Transport) { self.inner = inner }

    func setOffline(_ offline: Bool) {
        isOffline = offline
        if offline { for request in inFlight.values { request.cancel() } }
    }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        guard !isOffline else { throw TransportFailure(Self.reason) }
        let inner = self.inner
        let id = UUID()
        let task = Task { try await inner.send(request) }
        inFlight[id] = task
        defer { inFlight[id] = nil }
        let response: TransportResponse
        do {
            response = try await withTaskCancellationHandler { try await task.value } onCancel: { task.cancel() }
        } catch {
            throw isOffline ? TransportFailure(Self.reason) : error
        }
        guard !isOffline else { throw TransportFailure(Self.reason) }
        return response
    }
}
