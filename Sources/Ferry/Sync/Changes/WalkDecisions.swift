import FerryBase

/// Which parents' tables (and owned tables, each its own parent) each
/// caller's feed walks instead of reading through its paths
/// (``ReadThrough/walkGate(_:)``), decided by one statement for every table
/// and then remembered for ``lifetime`` per bearer and schema load, so that the
/// statements of a caller who walks are the walk alone: without it every
/// activity check and page counts the caller's readable rows of each parent
/// again (an owner of 1,000 sets: 1 ms of each statement).
///
/// A decision only ever changes what a statement costs, never what it
/// answers (both ways serve the same entries, `ReadThroughTests`), so a stale
/// one is safe: a caller whose share of a parent moved past half keeps the
/// other way for up to a minute.
final class WalkDecisions: Sendable {
    struct Key: Hashable, Sendable {
        /// The bearer's hash (the process never keeps a token itself).
        let bearer: String
        /// The schema load (``SchemaCache/generation``): the paths it decided for.
        let generation: Int
    }

    private struct Entry {
        let walking: Set<String>
        let until: ContinuousClock.Instant
    }

    private let entries = Locked<[Key: Entry]>([:])
    let lifetime: Duration
    /// Past this many callers, lapsed decisions go and, if that is not enough, all of them.
    let capacity: Int

    init(lifetime: Duration = .seconds(60), capacity: Int = 100_000) {
        self.lifetime = lifetime
        self.capacity = max(1, capacity)
    }

    /// The parents `key`'s caller walks, while the decision is recent.
    func walking(_ key: Key, now: ContinuousClock.Instant = .now) -> Set<String>? {
        entries.withLock { entries in
            guard let entry = entries[key] else { return nil }
            guard now < entry.until else {
                entries[key] = nil
                return nil
            }
            return entry.walking
        }
    }

    func remember(_ walking: Set<String>, for key: Key, now: ContinuousClock.Instant = .now) {
        entries.withLock { entries in
            if entries.count >= capacity, entries[key] == nil {
                entries = entries.filter { now < $0.value.until }
                if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            }
            entries[key] = Entry(walking: walking, until: now + lifetime)
        }
    }
}
