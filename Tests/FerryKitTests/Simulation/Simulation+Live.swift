import FerryHTTPTestSupport
import Foundation

/// The simulation's continuous mode (``Simulation/live``): what differs from
/// devices that sync only when told.
extension Simulation {
    /// In continuous mode a crash fault hits a request of the engine's own
    /// loop, which only sees an error: the simulation reopens the device, as
    /// the dead process's next launch would.
    func reopenCrashed(step: Int) async throws {
        for device in devices where device.transport.takeCrash() {
            try await device.crashAndReopen(faultRate: faultRate)
            report.crashes += 1
            note("\(step) \(device.name) crashed in its loop, reopen")
        }
    }

    /// Continuous mode's quiescence: the network back for every device (which
    /// ends each backoff), then nothing but time: no `sync()` is called until
    /// every queue is empty, every device holds what the server shows, and
    /// every device has parked a long poll. The last is asked here, not only
    /// checked after: a device offline for most of a seed can converge by its
    /// first download after the network comes back, before its loop reaches
    /// the wait (seed 832 of the soak). A device whose loop never waits still
    /// fails, by the "not live" check once this gives up.
    func quiesceLive() async throws {
        for device in devices { device.online() }
        _ = try await eventuallyAsync(within: 120, every: 0.25) {
            for device in devices where try device.store.pendingCount() > 0 { return false }
            guard try await differences().isEmpty else { return false }
            return devices.allSatisfy { $0.longPolls > 0 }
        }
    }
}
