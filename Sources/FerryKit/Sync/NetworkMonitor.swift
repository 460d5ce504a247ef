#if canImport(Network)
import Foundation
import Network

/// Continuous mode's ear for the network on Apple platforms: `NWPathMonitor`
/// reports each change of the device's path, and a path that becomes usable
/// again calls `available` (``SyncEngine/networkBecameAvailable()``), so the
/// next round runs at once instead of at the end of its backoff.
///
/// `@unchecked Sendable`: `monitor` is only started and cancelled, which
/// `NWPathMonitor` allows from any thread, and `changes` is only touched on
/// `queue`, where the monitor calls its handler. What a report means is
/// ``PathChanges``, which is platform-free and tested on Linux too.
final class NetworkMonitor: @unchecked Sendable {
    private let monitor = NWPathMonitor()
    private let queue = DispatchQueue(label: "FerryKit.NetworkMonitor")
    private let available: @Sendable () -> Void
    private var changes = PathChanges()

    init(available: @escaping @Sendable () -> Void) {
        self.available = available
        monitor.pathUpdateHandler = { [weak self] path in self?.changed(path.status == .satisfied) }
        monitor.start(queue: queue)
    }

    private func changed(_ now: Bool) {
        if changes.report(satisfied: now) { available() }
    }

    func cancel() { monitor.cancel() }
}
#endif
