import FerryHTTPTestSupport
@testable import FerryKit
import FerryTestSupport
import Foundation
@testable import FerryKitTestSupport

/// What one seed did and found.
struct SimulationReport {
    var seed: UInt64
    var devices = 0
    var operations = 0
    var faults: [SimulationFault: Int] = [:]
    var crashes = 0
    var serverRestarts = 0
    /// Lost writes a device sent again under another key (``RetryLog/rekeyed``).
    var rekeyed = 0
    /// Updates whose writer lost access between the server's answer and its delivery (``SimulationFault/revokedBeforeAnswer``).
    var revocationRaces = 0
    /// Continuous mode: long polls sent, and times the server's LISTEN connection was killed.
    var longPolls = 0
    var listenerKills = 0
    /// Continuous mode with subscriptions: waits sent beside another (``LinkCounts/splitWaits``).
    var splitWaits = 0
    /// Subscriptions (issue 46): made, dropped, evicted (`.evicted` events), and the hours let pass.
    var subscribes = 0
    var unsubscribes = 0
    var evictions = 0
    var hoursPassed = 0
    /// Jobs' transactions held open across operations, and those that wrote a synced row late (issue 47).
    var slowTransactions = 0
    var lateWrites = 0
    var failures: [String] = []
    /// For each failure about a row, what each side knew of it.
    var diagnosis: [String] = []
    var log: [String] = []
}

/// A seeded run: devices of a few users, who share sets, write offline and
/// online, sync under faults, crash and see the server restart; then, with
/// every device online and every fault off, they sync until the queues are
/// empty, and the checks run (``check()``).
final class Simulation {
    let server: FerryServer
    /// The tables it writes: the server's app's.
    let schema: SimulationSchema
    let seed: UInt64
    let faultRate: Double
    let restarts: Bool
    /// Devices write as an app that only uses GRDB would (``SimulatedWrites``).
    let grdb: Bool
    /// Devices run in continuous mode (`engine.start()`): uploads, long polls
    /// and retries happen by themselves between the operations, under the
    /// same faults, and quiescence calls no `sync()`.
    let live: Bool
    var random: SplitMix64
    var users: [SimulatedUser] = []
    var devices: [SimulatedDevice] = []
    var report: SimulationReport
    let directory: URL

    /// Every value written to each field, by device, in order: the model the
    /// final state is checked against.
    struct FieldKey: Hashable { let resource: String, id: String, field: String }
    var writes: [FieldKey: [(device: String, value: JSONValue)]] = [:]
    /// Every row a device created (no other row may exist on the server).
    var created: Set<RowKey> = []
    /// Every shared row (set) a device created, in order: what devices subscribe to.
    var createdShared: [String] = []
    /// The seed's clock, every device's engines': ``Operation/passTime`` moves it.
    let clock = SimulationClock()
    /// Each device's subscriptions, by shared row id, as the simulation made
    /// them (``Simulation/Subscribed``): the model the end state is checked
    /// against, never read from the device.
    var subscribed: [String: [String: Subscribed]] = [:]
    /// A job's transaction held open across operations (``slowTransactionStep(step:)``).
    var slowTransaction: SlowTransaction?

    init(
        server: FerryServer, schema: SimulationSchema = .study, seed: UInt64, faultRate: Double, restarts: Bool,
        grdb: Bool = false, live: Bool = false
    ) {
        self.server = server
        self.schema = schema
        self.seed = seed
        self.faultRate = faultRate
        self.restarts = restarts
        self.grdb = grdb
        self.live = live
        random = SplitMix64(seed: seed)
        report = SimulationReport(seed: seed)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-sim-\(seed)-\(UUID().uuidString)")
    }

    /// Runs the seed: `steps` operations over `deviceCount` devices (two to
    /// eight) of two or three users, then quiescence and the checks.
    func run(deviceCount: Int, steps: Int) async throws -> SimulationReport {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let userCount = min(deviceCount, 2 + Int(random.next() % 2))
        for index in 0..<userCount {
            let name = "sim\(seed)u\(index)x\(UUID().uuidString.prefix(6))"
            // Not `server.user`: the SQL path, at bcrypt's cheapest cost (``FerryServer/quickUser(_:)``).
            let signedIn = try await server.quickUser(name)
            users.append(SimulatedUser(name: name, id: signedIn.userID, token: signedIn.token))
        }
        for index in 0..<deviceCount {
            let user = users[index % users.count]
            // The revocation race only where it changes nothing else: manual devices writing through the store.
            let revoke = !live && !grdb && schema.app == SimulationSchema.study.app ? revoker(for: user.id) : nil
            let device = try SimulatedDevice(
                name: "d\(index)", user: user, directory: directory,
                baseURL: server.baseURL, seed: seed &* 31 &+ UInt64(index), live: live, clock: clock, revoke: revoke)
            device.transport.set(faultRate: faultRate)
            devices.append(device)
        }
        report.devices = deviceCount
        for device in devices { await device.start() }
        do {
            for device in devices { await device.sync(faultRate: faultRate) }
            for step in 0..<steps {
                try await perform(step: step)
                report.operations += 1
                if live { try await reopenCrashed(step: step) }
            }
            try await quiesce()
        } catch {
            // However the seed ends, no engine's loop outlives it, nor a job's transaction.
            slowTransaction?.connection.close()
            slowTransaction = nil
            for device in devices { await device.stop() }
            throw error
        }
        for device in devices { await device.stop() }
        try await check()
        for device in devices {
            for (fault, count) in device.injected { report.faults[fault, default: 0] += count }
            report.longPolls += device.longPolls
            report.splitWaits += device.counts.splitWaits
            report.revocationRaces += device.races
            report.evictions += device.events.filter { if case .evicted = $0 { true } else { false } }.count
        }
        if live {
            for device in devices where device.longPolls == 0 {
                report.failures.append("not live: \(device.name) never held a long poll")
            }
            // The store keeps the server's `live.max_wait_streams` from `GET /v1`: a device with
            // more streams splits them, and no wait of it is refused for naming too many.
            for device in devices {
                report.failures += device.counts.refusedWaits.prefix(3).map { "refused wait: \(device.name)'s POST /v1/changes/wait got 400: \($0)" }
            }
        }
        return report
    }

    func note(_ line: String) { report.log.append(line) }

    func record(_ device: SimulatedDevice, _ resource: String, _ id: String, _ values: RowData) {
        for (field, value) in values where field != "id" {
            writes[FieldKey(resource: resource, id: id, field: field), default: []].append((device.name, value))
        }
    }

    // MARK: Operations

    enum Operation: CaseIterable {
        case toggleOnline, createSet, editSet, deleteSet, createTerm, editTerm, deleteTerm, moveTerm
        case createFolder, link, unlink, share, unshare, sync, crash, restartServer
        /// Continuous mode only: the server's LISTEN connection is terminated
        /// (`pg_terminate_backend`), as a PostgreSQL failover does.
        case killListener
        /// With subscriptions only (``subscribes``): an owner makes one of its
        /// sets public or private again; a device subscribes to a set (anyone's,
        /// or one that does not exist) or drops one; the seed's clock jumps two hours.
        case publish, subscribe, unsubscribe, passTime
        /// With subscriptions only: a device deletes a set that is not its
        /// user's (a public set it subscribed to: refused, the set stays).
        case deleteOthersSet
        /// A job's transaction of the same database: opened without a synced
        /// write, kept open across operations, ended with or without a late
        /// synced write (``Simulation/slowTransactionStep(step:)``).
        case slowTransaction

        var weight: Int {
            switch self {
            case .toggleOnline: 6
            case .createSet: 6
            case .editSet: 10
            case .deleteSet: 2
            case .createTerm: 14
            case .editTerm: 14
            case .deleteTerm: 3
            case .moveTerm: 8
            case .createFolder: 3
            case .link: 4
            case .unlink: 2
            case .share: 5
            case .unshare: 2
            case .sync: 18
            case .crash: 2
            case .restartServer: 1
            case .killListener: 1
            case .publish: 5
            case .subscribe: 20
            case .unsubscribe: 8
            case .passTime: 3
            case .deleteOthersSet: 4
            case .slowTransaction: 12
            }
        }

        var subscribing: Bool {
            switch self {
            case .publish, .subscribe, .unsubscribe, .passTime, .deleteOthersSet: true
            default: false
            }
        }
    }

    func draw() -> Operation {
        let choices = Operation.allCases.filter {
            (restarts || $0 != .restartServer) && (live || $0 != .killListener) && (subscribes || !$0.subscribing)
        }
        var roll = Int(random.next() % UInt64(choices.map(\.weight).reduce(0, +)))
        for choice in choices {
            roll -= choice.weight
            if roll < 0 { return choice }
        }
        return .sync
    }

    func perform(step: Int) async throws {
        let operation = draw()
        guard let device = random.pick(devices) else { return }
        let store = device.store
        var drawing = SplitMix64(seed: seed &+ UInt64(step) &* 7_919)
        let writes = SimulatedWrites(store: store, grdb: grdb, draw: { drawing.chance(0.5) })
        let tag = "\(device.name).\(step)"
        func short(_ id: String?) -> String { String((id ?? "-").prefix(8)) }
        do {
            switch operation {
            case .toggleOnline:
                if device.transport.offline { device.online() } else { device.transport.set(offline: true) }
                note("\(step) \(device.name) \(device.transport.offline ? "offline" : "online")")
            case .createSet:
                let shared = schema.shared
                var values: RowData = [shared.fields[0]: .string("set \(tag)")]
                // With public sets, some are public from the start.
                if subscribes, let flag = schema.publicFlag { values[flag] = .bool(random.chance(0.4)) }
                let id = try writes.create(shared.name, values)
                created.insert(RowKey(resource: shared.name, id: id))
                createdShared.append(id)
                record(device, shared.name, id, values)
                note("\(step) \(device.name) create set \(short(id))")
            case .editSet:
                let shared = schema.shared
                guard let set = random.pick(try store.rows(shared.name)), let id = set["id"]?.string else { return }
                let field = random.chance(0.5) ? shared.fields[0] : shared.fields[shared.fields.count - 1]
                let values: RowData = [field: .string("\(field) \(tag)")]
                try writes.update(shared.name, id: id, values)
                record(device, shared.name, id, values)
                note("\(step) \(device.name) edit set \(short(id)) \(field)")
            case .deleteSet:
                guard let set = random.pick(try store.rows(schema.shared.name)), let id = set["id"]?.string else { return }
                try writes.delete(schema.shared.name, id: id)
                note("\(step) \(device.name) delete set \(short(id))")
            case .createTerm:
                let child = schema.child
                guard let set = random.pick(try store.rows(schema.shared.name)), let setID = set["id"]?.string else { return }
                let values: RowData = [
                    child.reference: .string(setID), child.fields[0]: .string("word \(tag)"),
                    "rank": .string(try store.rankAtEnd(child.name, scope: .string(setID))),
                ]
                let id = try writes.create(child.name, values)
                created.insert(RowKey(resource: child.name, id: id))
                record(device, child.name, id, values)
                note("\(step) \(device.name) create term \(short(id)) in \(short(setID))")
            case .editTerm:
                let child = schema.child
                guard let term = random.pick(try store.rows(child.name)), let id = term["id"]?.string else { return }
                let field = random.chance(0.5) ? child.fields[0] : child.fields[child.fields.count - 1]
                let values: RowData = [field: .string("\(field) \(tag)")]
                try writes.update(child.name, id: id, values)
                record(device, child.name, id, values)
                note("\(step) \(device.name) edit term \(short(id)) \(field)")
            case .deleteTerm:
                guard let term = random.pick(try store.rows(schema.child.name)), let id = term["id"]?.string else { return }
                try writes.delete(schema.child.name, id: id)
                note("\(step) \(device.name) delete term \(short(id))")
            case .moveTerm:
                let child = schema.child
                guard let term = random.pick(try store.rows(child.name)), let id = term["id"]?.string else { return }
                let siblings = try store.rows(child.name, where: child.reference, equals: term[child.reference])
                    .filter { $0["id"]?.string != id }
                let anchor = random.chance(0.2) ? nil : random.pick(siblings)?["id"]?.string
                try writes.move(child.name, id: id, after: anchor)
                if let rank = try store.row(child.name, id: id)?["rank"] { record(device, child.name, id, ["rank": rank]) }
                note("\(step) \(device.name) move term \(short(id)) after \(short(anchor))")
            case .createFolder:
                let own = schema.own
                let values: RowData = [own.fields[0]: .string("folder \(tag)")]
                let id = try writes.create(own.name, values)
                created.insert(RowKey(resource: own.name, id: id))
                record(device, own.name, id, values)
                note("\(step) \(device.name) create folder \(short(id))")
            case .link:
                guard let link = schema.link,
                    let folder = random.pick(try store.rows(schema.own.name))?["id"]?.string,
                    let set = random.pick(try store.rows(schema.shared.name))?["id"]?.string
                else { return }
                let links = try store.rows(link.name, where: link.own, equals: .string(folder))
                guard !links.contains(where: { $0[link.shared]?.string == set }) else { return }
                let values: RowData = [link.own: .string(folder), link.shared: .string(set)]
                let id = try writes.create(link.name, values)
                created.insert(RowKey(resource: link.name, id: id))
                record(device, link.name, id, values)
                note("\(step) \(device.name) link folder \(short(folder)) set \(short(set))")
            case .unlink:
                guard let name = schema.link?.name, let link = random.pick(try store.rows(name))?["id"]?.string else { return }
                try writes.delete(name, id: link)
                note("\(step) \(device.name) unlink \(short(link))")
            case .share:
                let members = schema.members, owner = schema.shared.reference
                let own = try store.rows(schema.shared.name)
                    .filter { $0[owner] == .string(device.user.id) || $0[owner] == nil || $0[owner] == .null }
                guard let set = random.pick(own)?["id"]?.string,
                    let other = random.pick(users.filter { $0.id != device.user.id })
                else { return }
                let current = try store.rows(members.name, where: members.scope, equals: .string(set))
                guard !current.contains(where: { $0[members.user]?.string == other.id }) else { return }
                let values: RowData = [members.scope: .string(set), members.user: .string(other.id)]
                let id = try writes.create(members.name, values)
                created.insert(RowKey(resource: members.name, id: id))
                record(device, members.name, id, values)
                note("\(step) \(device.name) share set \(short(set)) with \(other.name)")
            case .unshare:
                let members = schema.members, owner = schema.shared.reference
                let own = Set(try store.rows(schema.shared.name).filter { $0[owner] == .string(device.user.id) }.compactMap { $0["id"]?.string })
                let shares = try store.rows(members.name).filter { own.contains($0[members.scope]?.string ?? "") }
                guard let share = random.pick(shares)?["id"]?.string else { return }
                try writes.delete(members.name, id: share)
                note("\(step) \(device.name) unshare \(short(share))")
            case .sync where live && random.chance(0.5):
                // Live, most of the syncing happens by itself: time passes for it.
                let pause = 1 + Int(random.next() % 60)
                try await Task.sleep(for: .milliseconds(pause))
                note("\(step) \(device.name) waits \(pause) ms")
            case .sync:
                let ok = await device.sync(faultRate: faultRate)
                note("\(step) \(device.name) sync \(ok ? "ok" : "failed: \(await device.engine.currentStatus.lastError ?? "crash")")")
            case .crash:
                try await device.crashAndReopen(faultRate: faultRate)
                report.crashes += 1
                note("\(step) \(device.name) crash, reopen")
            case .restartServer:
                try server.restart()
                report.serverRestarts += 1
                note("\(step) server restart")
            case .killListener:
                // The harness's own connection, not a device's: a load spike on the
                // machine can time it out (soak seed 1844), which says nothing of
                // FerryKit, so it is tried again before it counts as a failure.
                let killed = try await Self.harnessStatement {
                    try server.database.column(
                        """
                        SELECT count(pg_terminate_backend(pid))::text FROM pg_stat_activity
                         WHERE datname = current_database() AND application_name = 'ferry-listen'
                        """)
                }
                report.listenerKills += 1
                note("\(step) server's LISTEN connection killed (\(killed.first.flatMap { $0 } ?? "?"))")
            case .publish:
                try publish(device, writes: writes, step: step, tag: tag)
            case .subscribe:
                try await subscribe(device, step: step)
            case .unsubscribe:
                try await unsubscribe(device, step: step)
            case .deleteOthersSet:
                let owner = schema.shared.reference
                let others = try store.rows(schema.shared.name).filter { $0[owner]?.string.map { $0 != device.user.id } ?? false }
                guard let id = random.pick(others)?["id"]?.string else { return }
                try writes.delete(schema.shared.name, id: id)
                note("\(step) \(device.name) delete someone else's set \(short(id))")
            case .slowTransaction:
                try await slowTransactionStep(step: step)
            case .passTime:
                clock.advance(Self.timeStep)
                report.hoursPassed += Int(Self.timeStep / 3_600)
                note("\(step) \(Int(Self.timeStep / 3_600)) hours pass")
            }
        } catch let error as FerryKitError {
            note("\(step) \(device.name) \(operation) refused locally: \(error)")
        } catch {
            // A local write must never fail on what sync brought (ranks, rows).
            report.failures.append("local: \(device.name) \(operation) threw \(error)")
            note("\(step) \(device.name) \(operation) threw \(error)")
        }
    }

    /// `body`, a statement of the harness's own, tried up to three times a
    /// second apart: only its last error is the run's.
    static func harnessStatement<T>(_ body: () throws -> T) async throws -> T {
        for _ in 1..<3 {
            if let value = try? body() { return value }
            try await Task.sleep(for: .seconds(1))
        }
        return try body()
    }

    // MARK: Quiescence

    /// Every device online, no faults; sync until every queue is empty and every
    /// device holds what the server shows its user. The feed waits for the
    /// cluster's oldest transaction, so this polls, within a deadline.
    func quiesce() async throws {
        // A job still open writes its late row now: quiescence must deliver it.
        try await endSlowTransaction(step: report.operations, lateWrite: true)
        for device in devices { device.transport.set(offline: false, faultRate: 0) }
        // Subscriptions dropped with an hour to live run out, so that the check
        // sees them evicted (those of ten days stay a warm cache).
        if subscribes {
            clock.advance(Self.timeStep)
            report.hoursPassed += Int(Self.timeStep / 3_600)
            note("end: \(Int(Self.timeStep / 3_600)) hours pass")
        }
        if live { return try await quiesceLive() }
        // Not thrown: `check()` then reports what still differs.
        _ = try await eventuallyAsync(within: 120) {
            for device in devices { await device.sync(faultRate: 0) }
            for device in devices where try device.store.pendingCount() > 0 { return false }
            return try await differences().isEmpty
        }
    }

    /// The resources the checks compare.
    var resources: [String] { schema.resources }

    /// The checker's own reads go through a loaded machine too: a timeout or a
    /// 503 is retried (a few times), not counted against FerryKit.
    static func patiently(_ call: () async throws -> TransportResponse) async throws -> TransportResponse {
        var attempt = 0
        while true {
            attempt += 1
            do {
                UploadLatencies.shared.countRequest()
                let response = try await call()
                if response.status != 503 || attempt >= 10 { return response }
            } catch  where attempt < 10 {
                _ = error
            }
            // A real sleep: a retry's backoff, as an app's; the attempts bound it, and the
            // answer is then checked as any other.
            try await Task.sleep(for: .milliseconds(200 * attempt))
        }
    }

    /// What the server shows `user`: every live row of each resource, by
    /// Index; with `includingPublic` false (`?public=false`), only the rows the user
    /// reads as owner or member, which are the default stream's.
    func serverView(_ user: SimulatedUser, includingPublic: Bool = true) async throws -> [String: [String: RowData]] {
        var view: [String: [String: RowData]] = [:]
        for resource in resources { view[resource] = try await self.indexRows(user, resource, includingPublic ? "" : "&public=false") }
        return view
    }

    /// Every live row of `resource` that `user` may read, by Index with `filter` (`&column=value`).
    func indexRows(_ user: SimulatedUser, _ resource: String, _ filter: String) async throws -> [String: RowData] {
        let transport = SocketTransport.chosen(baseURL: server.baseURL, timeout: 30)
        var path: String? = "/v1/\(resource)?limit=1000" + filter
        var rows: [String: RowData] = [:]
        while let current = path {
            let response = try await Self.patiently {
                try await transport.send(TransportRequest(method: "GET", path: current, headers: ["Authorization": "Bearer \(user.token)"]))
            }
            guard response.status == 200, let body = response.object, case .array(let data)? = body["data"] else {
                throw TestEnvironment.Missing(description: "GET \(current) as \(user.name) answered \(response.status)")
            }
            for row in data.compactMap(\.object) { if let id = row["id"]?.string { rows[id] = row } }
            path = body["paging"]?.object?["next"]?.string
        }
        return rows
    }

    /// Each device against its user's server view: rows missing, extra, or
    /// with a field that differs.
    func differences() async throws -> [String] { try await differingRows().map(\.text) }

    /// A difference, and the row it is about.
    struct Difference {
        let text: String
        let device: SimulatedDevice
        let resource: String
        let id: String
    }

    func differingRows() async throws -> [Difference] {
        var found: [Difference] = []
        let (views, warm) = try await expectedViews()
        for device in devices {
            guard let view = views[device.name] else { continue }
            let cached = warm[device.name] ?? []
            for resource in resources {
                let server = view[resource] ?? [:]
                let local = Dictionary(
                    try device.store.rows(resource).compactMap { row in row["id"]?.string.map { ($0, row) } },
                    uniquingKeysWith: { a, _ in a })
                for id in Set(server.keys).subtracting(local.keys) {
                    found.append(Difference(text: "\(device.name) lacks \(resource) \(id)", device: device, resource: resource, id: id))
                }
                for id in Set(local.keys).subtracting(server.keys) {
                    // A row of a subscription dropped within its TTL may stay, as it was.
                    if let row = local[id], let root = streamRoot(resource, row), cached.contains(root) { continue }
                    found.append(
                        Difference(text: "\(device.name) has \(resource) \(id), the server does not", device: device, resource: resource, id: id))
                }
                for (id, row) in server {
                    guard let mine = local[id] else { continue }
                    for (field, value) in row where (mine[field] ?? .null) != value {
                        found.append(
                            Difference(
                                text: "\(device.name) \(resource) \(id) \(field): \(mine[field] ?? .null) here, \(value) on the server",
                                device: device, resource: resource, id: id))
                    }
                }
            }
        }
        return found
    }

    // MARK: Checks

    func check() async throws {
        let differences = try await differingRows()
        report.failures += differences.prefix(20).map { "diverged: \($0.text)" }
        report.diagnosis += differences.prefix(5).map { diagnose($0.device, $0.resource, $0.id) }
        // Steady state: with nothing left to do, a device's sync soon becomes
        // the feed's 304 alone (a cursor that does not move never gets there).
        // With subscriptions: one 304 for the default stream and one for each subscription.
        for device in devices {
            var quiet = false
            for _ in 0..<5 where !quiet {
                let before = device.transport.answered.count
                await device.sync(faultRate: 0)
                let streams = try device.store.subscriptionQueue().count + device.store.syncedSubscriptions().count
                let statuses = device.transport.statuses(after: before)
                quiet = statuses.count == 1 + streams && statuses.allSatisfy { $0 == 304 }
            }
            if !quiet { report.failures.append("restless: \(device.name)'s syncs never came down to a 304 per stream") }
        }
        if subscribes { try checkSubscriptions() }
        var refused: [String: Set<RowKey>] = [:]
        for device in devices {
            report.failures += device.retries.violations.map { "twice: \(device.name) \($0)" }
            report.rekeyed += device.retries.rekeyed
            let pending = try device.store.pendingCount()
            if pending > 0 {
                let stuck = try device.store.outbox().filter { $0.state != .rejected }.prefix(5)
                    .map { "\($0.kind) \($0.resource) \($0.rowID) attempts \($0.attempts) \($0.lastError ?? "")" }
                report.failures.append("stuck: \(device.name) has \(pending) operations waiting: \(stuck)")
            }
            // Every refusal reached the app as an event.
            let told = Set(
                device.events.compactMap { event -> RowKey? in
                    switch event {
                    case .rejected(let resource, let id, _, _): RowKey(resource: resource, id: id)
                    case .removed(let resource, let id, _, true, _): RowKey(resource: resource, id: id)
                    default: nil
                    }
                })
            let rejected = Set(try device.store.outbox().filter { $0.state == .rejected }.map { RowKey(resource: $0.resource, id: $0.rowID) })
            for key in rejected.subtracting(told) {
                report.failures.append("silent: \(device.name) holds a rejected \(key.resource) \(key.id) it was never told of")
            }
            refused[device.name] = rejected.union(told)
        }
        // The server's live rows, over every user's view (with public sets,
        // their private views: other seeds' public sets are everyone's to read).
        var live: [RowKey: RowData] = [:]
        for user in users {
            for (resource, rows) in try await serverView(user, includingPublic: !subscribes) {
                for (id, row) in rows { live[RowKey(resource: resource, id: id)] = row }
            }
        }
        for key in live.keys where !created.contains(key) {
            report.failures.append("phantom: the server holds \(key.resource) \(key.id), which no device created")
        }
        // No edit lost: a field only one device wrote ends as its last write,
        // unless the server refused that device's edits of the row; any field
        // ends as one of the values written to it.
        for (key, history) in writes {
            guard let row = live[RowKey(resource: key.resource, id: key.id)], let value = row[key.field] else { continue }
            let writers = Set(history.map(\.device))
            if writers.count == 1, let last = history.last,
                !(refused[last.device]?.contains(RowKey(resource: key.resource, id: key.id)) ?? false), value != last.value
            {
                report.failures.append(
                    "lost: \(key.resource) \(key.id) \(key.field) is \(value) on the server; \(last.device) last wrote \(last.value)")
            }
            let rowKey = RowKey(resource: key.resource, id: key.id)
            let kept = history.filter { !(refused[$0.device]?.contains(rowKey) ?? false) }
            if !kept.isEmpty, !history.contains(where: { $0.value == value }) {
                report.failures.append(
                    "invented: \(key.resource) \(key.id) \(key.field) is \(value), never written; "
                        + "writes: \(history.map { "\($0.device) \($0.value)" })")
            }
        }
    }
}
