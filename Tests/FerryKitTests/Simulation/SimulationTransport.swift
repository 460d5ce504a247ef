import FerryKit
import Foundation
import Synchronization
@testable import FerryKitTestSupport

/// The faults the simulation puts between a device and the server.
enum SimulationFault: String, CaseIterable, Sendable {
    /// The request never reaches the server.
    case dropRequest
    /// The server applies it; the answer is lost.
    case dropResponse
    /// It arrives late (1 to 40 ms).
    case delay
    /// The device sees 503 with `Retry-After: 0`; the server is not asked.
    case serviceUnavailable
    /// The device's previous write arrives again, late, just before this one:
    /// what a network that reorders and retransmits does.
    case lateDuplicate
    /// The device's process dies while this request is in flight; the
    /// simulation reopens its file.
    case crash
    /// A long poll (continuous mode's `wait=`) reaches the server, which holds
    /// it; 5 to 200 ms later the connection is cut, as a phone's radio or a
    /// proxy does. Drawn only for long polls, so that runs without continuous
    /// mode draw their faults as before.
    case dropMidWait
    /// Issue 51: an update of a shared row (or a new term in a shared set) reaches the server, which applies
    /// it; then the row's owner removes this user from the row's set, and the
    /// device applies the feed (its revocation) before the update's answer
    /// arrives, as a second `sync()` of the app's can. The answer must not
    /// bring the row back. Drawn only for a device given a revoker
    /// (``SimulationTransport/setRace(_:)``), for every PATCH and PUT and a
    /// third of the creates, outside the fault draw, so that the other modes
    /// draw their faults as before.
    case revokedBeforeAnswer
}

/// The device died (``SimulationFault/crash``): the simulation drops its
/// engine and store and opens the file again.
struct SimulatedCrash: Error {}

/// A device's link to the server: offline on command, and faulty at a rate,
/// each fault drawn from the device's own seeded generator.
final class SimulationTransport: Transport {
    struct State {
        var offline = false
        var faultRate = 0.0
        var random: SplitMix64
        var injected: [SimulationFault: Int] = [:]
        var lastWrite: TransportRequest?
        var sent = 0
        var lastStatus = 0
        /// Every answer's status, in order (a seed's few hundred): how a sync
        /// that asks several streams ended.
        var statuses: [Int] = []
        /// A ``SimulationFault/crash`` fired since the simulation last asked:
        /// in continuous mode the engine's loop, not the simulation, saw the error.
        var crashed = false
        /// Long polls, races, split waits and refused waits (``LinkCounts``).
        var counts = LinkCounts()
        /// `POST /v1/changes/wait` requests sent and not yet ended.
        var waitsInFlight = 0
        /// What ``SimulationFault/revokedBeforeAnswer`` runs between the
        /// server's answer and its delivery; true when it revoked and pulled.
        var race: (@Sendable (TransportRequest) async -> Bool)?
    }

    let inner: any Transport
    private let state: Mutex<State>
    /// Writes the server applied whose answers the device never saw, and what
    /// their retries were answered: shared by every incarnation of the device.
    let retries: RetryLog

    init(_ inner: any Transport, seed: UInt64, retries: RetryLog = RetryLog()) {
        self.inner = inner
        self.retries = retries
        state = Mutex(State(random: SplitMix64(seed: seed)))
    }

    func set(offline: Bool? = nil, faultRate: Double? = nil) {
        state.withLock { state in
            if let offline { state.offline = offline }
            if let faultRate { state.faultRate = faultRate }
        }
    }

    /// Arms ``SimulationFault/revokedBeforeAnswer``.
    func setRace(_ race: @escaping @Sendable (TransportRequest) async -> Bool) {
        state.withLock { $0.race = race }
    }

    /// What this link counted.
    var counts: LinkCounts { state.withLock { $0.counts } }

    var offline: Bool { state.withLock { $0.offline } }
    /// Requests answered so far, and the last answer's status.
    var answered: (count: Int, lastStatus: Int) { state.withLock { ($0.sent, $0.lastStatus) } }
    /// The statuses of the answers after the first `count`.
    func statuses(after count: Int) -> [Int] { state.withLock { Array($0.statuses.dropFirst(count)) } }
    var injected: [SimulationFault: Int] { state.withLock { $0.injected } }

    /// Whether a crash fault fired since the last call.
    func takeCrash() -> Bool {
        state.withLock { state in
            defer { state.crashed = false }; return state.crashed
        }
    }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        UploadLatencies.shared.countRequest()
        // A long poll of the default stream, or one wait on all of a device's streams.
        let wait = request.path == "/v1/changes/wait"
        let longPoll = request.path.contains("wait=") || wait
        // A wait sent while another is open: the engine split its streams (``LinkCounts/splitWaits``).
        if wait {
            state.withLock { state in
                if state.waitsInFlight > 0 { state.counts.splitWaits += 1 }
                state.waitsInFlight += 1
            }
        }
        defer { if wait { state.withLock { $0.waitsInFlight -= 1 } } }
        let (offline, fault, delay, previous): (Bool, SimulationFault?, Int, TransportRequest?) = state.withLock { state in
            guard !state.offline else { return (true, nil, 0, nil) }
            if longPoll { state.counts.longPolls += 1 }
            // Writes meet faults more often than reads: they are fewer, and a
            // lost write is where duplicates and lost edits come from.
            let rate = request.method == "GET" || longPoll ? state.faultRate : min(0.6, state.faultRate * 2.5)
            // Updates are few in a seed (most rows are created and edited before
            // they are sent), and the race revokes only a collaborator's: every
            // update runs it, and a third of the creates (a collaborator's new
            // term in a shared set), outside the fault draw.
            let update = request.method == "PATCH" || request.method == "PUT"
            let create = request.method == "POST" && request.path != "/v1/batch" && !request.path.hasPrefix("/v1/auth") && !longPoll
            if state.race != nil, update || (create && state.random.chance(0.3)) {
                state.injected[.revokedBeforeAnswer, default: 0] += 1
                return (false, .revokedBeforeAnswer, 0, nil)
            }
            let faults = SimulationFault.allCases.filter { fault in
                switch fault {
                case .dropMidWait: longPoll
                case .revokedBeforeAnswer: false
                default: true
                }
            }
            guard state.random.chance(rate), let fault = state.random.pick(faults) else {
                return (false, nil, 0, nil)
            }
            state.injected[fault, default: 0] += 1
            if fault == .crash { state.crashed = true }
            return (false, fault, 1 + Int(state.random.next() % 40), state.lastWrite)
        }
        if offline { throw TransportFailure("offline") }
        switch fault {
        case .dropRequest?:
            throw TransportFailure("simulated: request dropped")
        case .dropResponse?:
            let lost = try await deliver(request)
            retries.lost(request, lost)
            throw TransportFailure("simulated: response lost")
        case .delay?:
            // A real sleep: a slow network is the fault injected.
            try await Task.sleep(for: .milliseconds(delay))
        case .serviceUnavailable?:
            return TransportResponse(
                status: 503, headers: ["Retry-After": "0", "Content-Type": "application/problem+json"],
                body: Data(#"{"code":"unavailable","status":503}"#.utf8))
        case .lateDuplicate?:
            if let previous { _ = try? await inner.send(previous) }
        case .crash?:
            // Half the time the server got it first, as with a process killed
            // after writing the request and before reading the answer.
            if delay % 2 == 0, let lost = try? await inner.send(request) { retries.lost(request, lost) }
            throw SimulatedCrash()
        case .revokedBeforeAnswer?:
            let response = try await deliver(request)
            if (200..<300).contains(response.status), let race = state.withLock({ $0.race }), await race(request) {
                state.withLock { $0.counts.races += 1 }
            }
            return response
        case .dropMidWait?:
            let inner = self.inner
            let call = Task { try await inner.send(request) }
            defer { call.cancel() }
            // A real sleep: how long the server held the poll before the cut is the fault.
            try await Task.sleep(for: .milliseconds(delay * 5))
            throw TransportFailure("simulated: long poll cut mid-wait")
        case nil:
            break
        }
        return try await deliver(request)
    }

    private func deliver(_ request: TransportRequest) async throws -> TransportResponse {
        let started = ContinuousClock.now
        let response = try await inner.send(request)
        if request.method != "GET" {
            UploadLatencies.shared.record(ContinuousClock.now - started)
            retries.answered(request, response)
        }
        state.withLock { state in
            if request.method != "GET" { state.lastWrite = request }
            state.sent += 1
            state.lastStatus = response.status
            state.statuses.append(response.status)
            if request.path == "/v1/changes/wait", response.status == 400 {
                state.counts.refusedWaits.append(String(decoding: response.body.prefix(300), as: UTF8.self))
            }
        }
        return response
    }
}

/// What a device's links counted, summed over its incarnations (``SimulatedDevice/counts``).
struct LinkCounts {
    /// Long polls sent (continuous mode), faulty or not: the default stream's and `POST /v1/changes/wait`.
    var longPolls = 0
    /// Races of ``SimulationFault/revokedBeforeAnswer`` that revoked the writer's access.
    var races = 0
    /// Waits sent while another of the same link was open: the engine split its
    /// streams over several waits (more than the server's `live.max_wait_streams`).
    var splitWaits = 0
    /// The bodies of waits answered 400: a device that knows the server's cap never sends one.
    var refusedWaits: [String] = []

    static func + (a: LinkCounts, b: LinkCounts) -> LinkCounts {
        LinkCounts(
            longPolls: a.longPolls + b.longPolls, races: a.races + b.races, splitWaits: a.splitWaits + b.splitWaits,
            refusedWaits: a.refusedWaits + b.refusedWaits)
    }
}

/// Every upload's round trip (request sent to answer read), for the soak's
/// per-minute p50 and p99.
final class UploadLatencies: Sendable {
    static let shared = UploadLatencies()
    private let samples = Mutex<[Double]>([])
    private let requests = Atomic<Int>(0)

    /// One more request over URLSession (a device's or the checker's): the
    /// soak relates the test process's memory to their count, since
    /// Foundation's URLSession on Linux keeps a little of each
    /// (bench/soak/urlsession-growth.swift).
    func countRequest() { requests.add(1, ordering: .relaxed) }

    /// Requests counted so far.
    var requestCount: Int { requests.load(ordering: .relaxed) }

    func record(_ duration: Duration) {
        let milliseconds = Double(duration.components.seconds) * 1_000 + Double(duration.components.attoseconds) / 1e15
        samples.withLock { $0.append(milliseconds) }
    }

    /// The samples since the last drain.
    func drain() -> [Double] {
        samples.withLock { samples in
            defer { samples = [] }; return samples
        }
    }
}

/// The promise of `Idempotency-Key`, checked on the wire: a write the server
/// applied and whose answer was lost, sent again as the same request, is
/// answered as a replay of the first (`Idempotent-Replayed: true`), never
/// executed a second time.
final class RetryLog: Sendable {
    private struct State {
        /// Lost writes by method, path and body: the key each carried.
        var lost: [String: String] = [:]
        var violations: [String] = []
        /// Lost writes sent again with the same body under another key (the
        /// device's pending operations changed meanwhile): a new request, not
        /// a retry, so the server rightly runs it.
        var rekeyed = 0
    }

    private let state = Mutex(State())

    private static func signature(_ request: TransportRequest) -> String {
        request.method + " " + request.path + " " + (request.body.map { String(decoding: $0, as: UTF8.self) } ?? "")
    }

    private static func key(_ request: TransportRequest) -> String { request.headers["Idempotency-Key"] ?? "none" }

    /// The server answered `response` to `request`, and the device never saw it.
    func lost(_ request: TransportRequest, _ response: TransportResponse) {
        guard request.method != "GET", (200..<300).contains(response.status) else { return }
        state.withLock { $0.lost[Self.signature(request)] = Self.key(request) }
    }

    func answered(_ request: TransportRequest, _ response: TransportResponse) {
        let signature = Self.signature(request)
        let key = Self.key(request)
        state.withLock { state in
            guard let lostKey = state.lost.removeValue(forKey: signature) else { return }
            guard lostKey == key else {
                state.rekeyed += 1
                return
            }
            // An earlier send with this key is still running (a crashed
            // device's, say): nothing ran, and the next answer to the key must
            // be the replay.
            if response.status == 409, response.object?["code"]?.string == "idempotency_key_in_use" {
                state.lost[signature] = lostKey
                return
            }
            if !(200..<300).contains(response.status) || response.headers["idempotent-replayed"] != "true" {
                let body = String(decoding: response.body.prefix(300), as: UTF8.self)
                state.violations.append(
                    "\(request.method) \(request.path) applied, answer lost; the same request again (key \(key)) got "
                        + "\(response.status) without Idempotent-Replayed: executed twice; answer \(body)")
            }
        }
    }

    var violations: [String] { state.withLock { $0.violations } }
    var rekeyed: Int { state.withLock { $0.rekeyed } }
}
