@testable import FerryKit
import Foundation
import GRDB
@testable import FerryKitTestSupport

/// Subscriptions in the simulation (issue 46), on a schema with public sets
/// and a stream (``SimulationSchema/studyPublic``): owners make sets public
/// and private again, devices subscribe to sets at random (public ones,
/// their own, others' private ones, ids that never existed) with a TTL and a
/// priority, drop them, and the seed's clock jumps past TTLs, all under the
/// usual faults. At the end each device must hold exactly its user's default
/// stream (Index with `public=false`) plus what its user may read of each
/// set it still subscribes to, or dropped within the TTL; the simulation's
/// own record of what it subscribed to says which, never the device's store.
extension Simulation {
    /// A subscription as the simulation made it.
    struct Subscribed {
        var ttl: TimeInterval
        /// The seed's clock (``SimulationClock/passed``) when it was dropped; nil while active.
        var unsubscribedAt: TimeInterval?
    }

    /// Whether this run subscribes: the schema has public rows and a stream.
    var subscribes: Bool { schema.publicFlag != nil && schema.stream != nil }

    /// TTLs drawn: none (the rows leave with the next round), an hour, ten
    /// days. The clock jumps by ``timeStep``, more than an hour and, in a
    /// seed's few jumps, less than ten days; the wall clock moves seconds in a
    /// seed. So whether a TTL ran out is decided by the jumps alone.
    static let ttls: [TimeInterval] = [0, 3_600, 864_000]
    static let timeStep: TimeInterval = 7_200

    /// Whether `subscription` is still in the device's store: active, or dropped within its TTL.
    func covers(_ subscription: Subscribed) -> Bool {
        guard let at = subscription.unsubscribedAt else { return true }
        return subscription.ttl > 0 && clock.passed - at < subscription.ttl
    }

    /// Dropped within its TTL: a warm cache. Its rows are no longer followed
    /// (an edit made since may not be there), and a subscription dropped before
    /// it synced never downloads at all (Trello's queue, docs/FERRYKIT.md): its
    /// rows may be on the device or not, as they were. Only they.
    func warm(_ subscription: Subscribed) -> Bool { subscription.unsubscribedAt != nil && covers(subscription) }

    /// The set a row of the stream belongs to (the set itself, a term's, a
    /// collaborator row's); nil for a row no stream holds (folders, links).
    func streamRoot(_ resource: String, _ row: RowData) -> String? {
        switch resource {
        case schema.shared.name: row["id"]?.string
        case schema.child.name: row[schema.child.reference]?.string
        case schema.members.name: row[schema.members.scope]?.string
        default: nil
        }
    }

    /// An owner's set becomes public, or private again.
    func publish(_ device: SimulatedDevice, writes: SimulatedWrites, step: Int, tag: String) throws {
        guard let flag = schema.publicFlag else { return }
        let owner = schema.shared.reference
        let own = try device.store.rows(schema.shared.name)
            .filter { $0[owner] == .string(device.user.id) || $0[owner] == nil || $0[owner] == .null }
        guard let set = random.pick(own), let id = set["id"]?.string else { return }
        let values: RowData = [flag: .bool(!(set[flag]?.bool ?? false))]
        try writes.update(schema.shared.name, id: id, values)
        record(device, schema.shared.name, id, values)
        note("\(step) \(device.name) set \(id.prefix(8)) \(values[flag] == .bool(true) ? "public" : "private")")
    }

    /// A device subscribes to a set any device created (most are not its
    /// user's), now and then to one that never existed.
    func subscribe(_ device: SimulatedDevice, step: Int) async throws {
        guard let stream = schema.stream else { return }
        let id = random.chance(0.1) ? UUID().uuidString.lowercased() : random.pick(createdShared)
        guard let id else { return }
        let ttl = random.pick(Self.ttls) ?? 0
        let priority = random.pick(SubscriptionPriority.allCases) ?? .normal
        try await device.engine.subscribe(stream: stream, id: id, ttl: SubscriptionTTL(seconds: ttl), priority: priority)
        subscribed[device.name, default: [:]][id] = Subscribed(ttl: ttl)
        report.subscribes += 1
        note("\(step) \(device.name) subscribes to \(id.prefix(8)) ttl \(Int(ttl)) s \(priority)")
    }

    /// A device drops one of its active subscriptions.
    func unsubscribe(_ device: SimulatedDevice, step: Int) async throws {
        guard let stream = schema.stream else { return }
        let active = (subscribed[device.name] ?? [:]).filter { $0.value.unsubscribedAt == nil }.keys.sorted()
        guard let id = random.pick(active) else { return }
        try await device.engine.unsubscribe(StreamSubscription(stream: stream, id: id, store: device.store))
        subscribed[device.name]?[id]?.unsubscribedAt = clock.passed
        report.unsubscribes += 1
        note("\(step) \(device.name) unsubscribes from \(id.prefix(8))")
    }

    /// What each device must hold, by device name: its user's default
    /// stream, plus, with subscriptions, what its user may read of each set
    /// it subscribes to (``streamView(_:_:)``); without them, everything its
    /// user may read. And the sets whose rows it may hold besides, as they
    /// were (``warm(_:)``).
    func expectedViews() async throws -> (views: [String: [String: [String: RowData]]], warm: [String: Set<String>]) {
        var defaults: [String: [String: [String: RowData]]] = [:]
        for user in users { defaults[user.id] = try await serverView(user, includingPublic: !subscribes) }
        var streams: [String: [String: [String: RowData]]] = [:]
        var views: [String: [String: [String: RowData]]] = [:]
        var warmSets: [String: Set<String>] = [:]
        for device in devices {
            var view = defaults[device.user.id] ?? [:]
            warmSets[device.name] = Set((subscribed[device.name] ?? [:]).filter { warm($0.value) }.keys)
            for (id, subscription) in (subscribed[device.name] ?? [:]).sorted(by: { $0.key < $1.key })
            where subscription.unsubscribedAt == nil {
                let key = device.user.id + ":" + id
                if streams[key] == nil { streams[key] = try await streamView(device.user, id) }
                for (resource, rows) in streams[key] ?? [:] { view[resource, default: [:]].merge(rows) { a, _ in a } }
            }
            views[device.name] = view
        }
        return (views, warmSets)
    }

    /// What `user` may read of the stream of set `id`: the set, its terms and
    /// its collaborator rows (examples/study's `set` stream), by Index, public rows included.
    func streamView(_ user: SimulatedUser, _ id: String) async throws -> [String: [String: RowData]] {
        [
            schema.shared.name: try await self.indexRows(user, schema.shared.name, "&id=\(id)"),
            schema.child.name: try await self.indexRows(user, schema.child.name, "&\(schema.child.reference)=\(id)"),
            schema.members.name: try await self.indexRows(user, schema.members.name, "&\(schema.members.scope)=\(id)"),
        ]
    }

    /// Each device's store holds the subscriptions the simulation left it:
    /// the active ones active, the dropped ones within their TTL waiting, and
    /// no other (a dropped one whose TTL ran out was evicted, with nothing
    /// pending to keep it).
    func checkSubscriptions() throws {
        for device in devices {
            let held = try device.store.database.read { db in
                try GRDB.Row.fetchAll(
                    db, sql: "SELECT key, unsubscribed_at IS NULL AS active FROM ferry_subscription WHERE stream = ?", arguments: [schema.stream]
                )
                .reduce(into: [String: Bool]()) { $0[$1["key"]] = $1["active"] }
            }
            let model = (subscribed[device.name] ?? [:]).filter { covers($0.value) }.mapValues { $0.unsubscribedAt == nil }
            for (id, active) in model where held[id] != active {
                report.failures.append(
                    "subscription: \(device.name)'s \(id) should be \(active ? "active" : "dropped, in its TTL"); the store holds "
                        + (held[id].map { $0 ? "it active" : "it dropped" } ?? "none"))
            }
            for id in Set(held.keys).subtracting(model.keys).sorted() {
                report.failures.append("subscription: \(device.name) still holds \(id), whose TTL ran out (or never made)")
            }
        }
    }
}
