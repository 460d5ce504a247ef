@testable import FerryKit
import Foundation
import Synchronization

/// One device of the simulation: a user's SQLite file, the engine syncing it,
/// its faulty link, and every event its engines have told the app, across
/// crashes (each reopen is a new process with a new engine on the same file).
/// In continuous mode (`live`) every engine it has runs by itself from the
/// moment it opens.
final class SimulatedDevice {
    let name: String
    let user: SimulatedUser
    let path: String
    let baseURL: URL
    let seed: UInt64
    let live: Bool
    /// The engines' clock: the seed's, which the simulation moves forward for TTLs.
    let clock: SimulationClock
    private(set) var store: FerryStore
    private(set) var engine: SyncEngine
    private(set) var transport: SimulationTransport
    private let received = EventLog()
    /// Retries of writes whose answers were lost, across incarnations.
    let retries = RetryLog()
    private var listener: Task<Void, Never>?
    private var incarnation: UInt64 = 0
    /// Faults injected by the links of earlier incarnations.
    private var earlier: [SimulationFault: Int] = [:]

    /// For ``SimulationFault/revokedBeforeAnswer``: removes this device's user
    /// from the set of a row an update names; true when it did.
    let revoke: (@Sendable (TransportRequest) -> Bool)?

    init(
        name: String, user: SimulatedUser, directory: URL, baseURL: URL, seed: UInt64, live: Bool = false,
        clock: SimulationClock = SimulationClock(), revoke: (@Sendable (TransportRequest) -> Bool)? = nil
    ) throws {
        self.clock = clock
        self.revoke = revoke
        self.name = name
        self.user = user
        self.baseURL = baseURL
        self.seed = seed
        self.live = live
        path = directory.appendingPathComponent("\(name).sqlite").path
        (store, engine, transport) = try Self.open(
            path: path, baseURL: baseURL, token: user.token, seed: seed, retries: retries, live: live, clock: clock)
        arm()
        listen()
    }

    /// Gives the link ``SimulationFault/revokedBeforeAnswer``'s race: the
    /// revocation, then this engine's pull of the feed, while the write's
    /// answer waits (the engine is an actor; its round is suspended there).
    private func arm() {
        guard let revoke else { return }
        // Weakly: the engine holds the transport, which holds this closure. A strong
        // capture kept every such device's engine, store and sockets for the whole run
        // (~35 descriptors a seed: a 2,000-seed run ran out of them near seed 620).
        transport.setRace { [weak engine = self.engine] request in
            guard revoke(request), let engine else { return false }
            _ = try? await engine.pull()
            return true
        }
    }

    /// Continuous mode's timing in the simulation: uploads 10 ms after a
    /// write, long polls of 2 s (short, so that a poll whose answer a fault
    /// lost costs the seed little), and a backoff from 20 ms to 0.2 s, not
    /// the 1 to 10 ms the manual devices use: an offline device's loop
    /// retries by itself, and must not spin meanwhile.
    static let uploadDelay: TimeInterval = 0.01
    static let longPollWait = 2

    static func open(
        path: String, baseURL: URL, token: String, seed: UInt64,
        retries: RetryLog, live: Bool, clock: SimulationClock
    ) throws -> (FerryStore, SyncEngine, SimulationTransport) {
        let store = try FerryStore(path: path)
        // The socket transport's timeout must outlast a long poll.
        let transport = SimulationTransport(SocketTransport.chosen(baseURL: baseURL, timeout: 10), seed: seed, retries: retries)
        let policy = live ? RetryPolicy(base: 0.02, cap: 0.2) : RetryPolicy(base: 0.001, cap: 0.01)
        let engine = SyncEngine(
            store: store, transport: transport, tokens: FixedToken(token), policy: policy, now: { clock.now }, random: { 0.5 })
        return (store, engine, transport)
    }

    /// Continuous mode on (a no-op for a manual device).
    func start() async {
        guard live else { return }
        await engine.start(uploadDelay: Self.uploadDelay, longPollWait: Self.longPollWait)
    }

    /// Continuous mode off, for the checks, which sync by hand.
    func stop() async { await engine.stop() }

    /// The device's network came back: what NWPathMonitor tells a live engine.
    func online() {
        transport.set(offline: false)
        engine.networkBecameAvailable()
    }

    private func listen() {
        let events = engine.events
        listener = Task { [received] in
            for await event in events { received.append(event) }
        }
    }

    /// Every event so far.
    var events: [SyncEvent] { received.all }

    /// The process died: the engine and store are dropped without another
    /// statement, and the app starts again on the same file, offline or not as
    /// it was, with the same fault rate. A live engine is stopped first (its
    /// loop would otherwise run on beside the new one's until its step ended,
    /// which no dead process does): what it had in flight is cancelled.
    func crashAndReopen(faultRate: Double) async throws {
        if live { await engine.stop() }
        let offline = transport.offline
        earlier.merge(transport.injected, uniquingKeysWith: +)
        earlierCounts = earlierCounts + transport.counts
        // The old listener drains what the dead engine had already told.
        incarnation += 1
        (store, engine, transport) = try Self.open(
            path: path, baseURL: baseURL, token: user.token, seed: seed &+ incarnation &* 7919,
            retries: retries, live: live, clock: clock)
        transport.set(offline: offline, faultRate: faultRate)
        arm()
        listen()
        await start()
    }

    /// What the links of earlier incarnations counted.
    private var earlierCounts = LinkCounts()
    /// What every link the device has had counted.
    var counts: LinkCounts { earlierCounts + transport.counts }
    /// Long polls sent by every link the device has had.
    var longPolls: Int { counts.longPolls }

    /// One sync; a simulated crash reopens the file. Other failures are what
    /// the app would see and retry later.
    @discardableResult
    func sync(faultRate: Double) async -> Bool {
        do {
            try await engine.sync()
            return true
        } catch is SimulatedCrash {
            try? await crashAndReopen(faultRate: faultRate)
            return false
        } catch {
            return false
        }
    }

    var injected: [SimulationFault: Int] { earlier.merging(transport.injected, uniquingKeysWith: +) }

    /// Races of ``SimulationFault/revokedBeforeAnswer`` that revoked, by every link the device has had.
    var races: Int { counts.races }
}

/// A seed's clock: the wall clock, plus the time the simulation let pass
/// (``Simulation/Operation/passTime``), so that a subscription's TTL runs out
/// within a seed. It only moves forward, so continuous mode's due times stay
/// in order.
final class SimulationClock: Sendable {
    private let offset = Mutex<TimeInterval>(0)
    var now: Date { Date().addingTimeInterval(passed) }
    /// The time let pass so far.
    var passed: TimeInterval { offset.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { offset.withLock { $0 += max(0, seconds) } }
}

/// A user of the simulation.
struct SimulatedUser: Sendable {
    let name: String
    let id: String
    let token: String
}

/// Events told by every engine a device has had.
final class EventLog: Sendable {
    private let events = Mutex<[SyncEvent]>([])
    func append(_ event: SyncEvent) { events.withLock { $0.append(event) } }
    var all: [SyncEvent] { events.withLock { $0 } }
}
