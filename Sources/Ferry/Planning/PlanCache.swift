import FerryBase

/// SQL text per resource and action shape, built once from the schema.
///
/// Each entry remembers the `Resource` it was planned from, so a reloaded
/// catalog (a changed table) simply misses and replans. Bounded: when full it
/// starts over, which only costs replanning. Every request reads it and
/// almost none write it.
final class PlanCache: Sendable {
    private struct Entry: Sendable { let resource: Resource; let sql: String }
    private let entries = Locked<[PlanKey: Entry]>([:])
    private let capacity: Int

    init(capacity: Int = 4096) { self.capacity = capacity }

    /// The cached SQL for `shape` on `resource`, or `build()`'s, stored.
    func sql(_ resource: Resource, _ shape: PlanKey.Shape, build: () -> String) -> String {
        let key = PlanKey(resource: resource.name, shape: shape)
        if let hit = entries.withLock({ $0[key] }), hit.resource == resource { return hit.sql }
        let sql = build()
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = Entry(resource: resource, sql: sql)
        }
        return sql
    }

    /// How many plans are stored (for tests).
    var count: Int { entries.withLock { $0.count } }
}
