import FerryBase

/// SQL text per resource and action shape, built once from the schema.
///
/// Each entry remembers the `Resource` it was planned from, so a reloaded
/// catalog (a changed table) simply misses and replans. Bounded: when full it
/// starts over, which only costs replanning. Every request reads it and
/// almost none write it, so readers share the lock.
final class PlanCache: Sendable {
    private struct Entry: Sendable { let resource: Resource; let sql: String }
    /// The resource's name and the action's shape, hashed as they are: joining
    /// them into one String cost an allocation on every request.
    private struct Key: Hashable, Sendable { let resource: String; let shape: String }
    private let entries = Locked<[Key: Entry]>([:])
    private let capacity: Int

    init(capacity: Int = 4096) { self.capacity = capacity }

    /// The cached SQL for `key` on `resource`, or `build()`'s, stored.
    func sql(_ resource: Resource, _ key: String, build: () -> String) -> String {
        let fullKey = Key(resource: resource.name, shape: key)
        if let hit = entries.withLock({ $0[fullKey] }), hit.resource == resource { return hit.sql }
        let sql = build()
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[fullKey] = Entry(resource: resource, sql: sql)
        }
        return sql
    }

    /// How many plans are stored (for tests).
    var count: Int { entries.withLock { $0.count } }
}
