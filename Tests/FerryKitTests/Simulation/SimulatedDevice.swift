@testable import FerryKit
import Foundation
import Synchronization

/// One device of the simulation: a user's SQLite file, the engine syncing it,
/// its faulty link, and every event its engines have told the app, across
/// crashes (each reopen is a new process with a new engine on the same file).
final class SimulatedDevice {
    let name: String
    let user: SimulatedUser
    let path: String
    let baseURL: URL
    let seed: UInt64
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

    init(name: String, user: SimulatedUser, directory: URL, baseURL: URL, seed: UInt64) throws {
        self.name = name
        self.user = user
        self.baseURL = baseURL
        self.seed = seed
        path = directory.appendingPathComponent("\(name).sqlite").path
        (store, engine, transport) = try Self.open(path: path, baseURL: baseURL, token: user.token, seed: seed, retries: retries)
        listen()
    }

    static func open(path: String, baseURL: URL, token: String, seed: UInt64,
                     retries: RetryLog) throws -> (FerryStore, SyncEngine, SimulationTransport) {
        let store = try FerryStore(path: path)
        let transport = SimulationTransport(SocketTransport.chosen(baseURL: baseURL), seed: seed, retries: retries)
        let engine = SyncEngine(store: store, transport: transport, tokens: FixedToken(token), policy: RetryPolicy(base: 0.001, cap: 0.01),
                                random: { 0.5 })
        return (store, engine, transport)
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
    /// it was, with the same fault rate.
    func crashAndReopen(faultRate: Double) throws {
        let offline = transport.offline
        earlier.merge(transport.injected, uniquingKeysWith: +)
        // The old listener drains what the dead engine had already told.
        incarnation += 1
        (store, engine, transport) = try Self.open(path: path, baseURL: baseURL, token: user.token, seed: seed &+ incarnation &* 7919,
                                                   retries: retries)
        transport.set(offline: offline, faultRate: faultRate)
        listen()
    }

    /// One sync; a simulated crash reopens the file. Other failures are what
    /// the app would see and retry later.
    @discardableResult
    func sync(faultRate: Double) async -> Bool {
        do {
            try await engine.sync()
            return true
        } catch is SimulatedCrash {
            try? crashAndReopen(faultRate: faultRate)
            return false
        } catch {
            return false
        }
    }

    var injected: [SimulationFault: Int] { earlier.merging(transport.injected, uniquingKeysWith: +) }
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
