import Foundation

/// The subscription rules FerryWeb shares (clients/conformance/subscriptions.json):
/// the download queue's order, what a stream does after a page, the streams a wait
/// names and its split at the server's cap, and what an eviction removes. Pure: the
/// store reads the facts, these decide, the store and the engine carry it out, so the
/// conformance suite runs the very rules a sync follows.
enum SubscriptionRules {
    /// The download queue, head first: active subscriptions that have not synced
    /// (nor been refused), higher priority first, within one the latest opened first.
    static func queue(_ all: [FerryStore.SubscriptionRecord]) -> [FerryStore.SubscriptionRecord] {
        ordered(all.filter { $0.unsubscribedAt == nil && ($0.status == "queued" || $0.status == "syncing") })
    }

    /// Active subscriptions that have synced once, in the queue's order: followed after
    /// the default stream, and waited on.
    static func synced(_ all: [FerryStore.SubscriptionRecord]) -> [FerryStore.SubscriptionRecord] {
        ordered(all.filter { $0.unsubscribedAt == nil && $0.status == "synced" })
    }

    static func ordered(_ list: [FerryStore.SubscriptionRecord]) -> [FerryStore.SubscriptionRecord] {
        list.sorted { ($0.priority, $0.opened) > ($1.priority, $1.opened) }
    }

    /// What a stream's download does after a page.
    enum PageOutcome: String, Sendable {
        /// Its end: the stream is done.
        case done
        /// Unsubscribed meanwhile: nothing more of it is asked.
        case dropped
        /// Another subscription heads the queue now: this one waits its turn again.
        case overtaken
        /// The next page.
        case next
    }

    /// After a page of `key` (`stream:id`) with `more` to come: the stream's end is done
    /// whatever else happened; one unsubscribed meanwhile is dropped; the queue's
    /// download (`preemptible`) yields to a new head at once.
    static func afterPage(_ key: String, more: Bool, preemptible: Bool, all: [FerryStore.SubscriptionRecord]) -> PageOutcome {
        guard more else { return .done }
        guard all.contains(where: { $0.key == key && $0.unsubscribedAt == nil }) else { return .dropped }
        if preemptible, let head = queue(all).first, head.key != key { return .overtaken }
        return .next
    }

    /// The streams one wait on every stream names, in order (`POST /v1/changes/wait`'s
    /// keys): the default stream, then each synced subscription with a cursor, in the
    /// queue's order. Nil (the default stream's own long poll) before the first sync,
    /// without synced subscriptions, and while a subscription waits in the queue (it
    /// downloads first, without waiting).
    static func waited(defaultCursor: String?, _ all: [FerryStore.SubscriptionRecord]) -> [(key: String, cursor: String)]? {
        guard let defaultCursor, queue(all).isEmpty else { return nil }
        let followed = synced(all)
        guard !followed.isEmpty else { return nil }
        var since: [(key: String, cursor: String)] = [(key: "default", cursor: defaultCursor)]
        for subscription in followed {
            if let cursor = subscription.cursor { since.append((key: subscription.key, cursor: cursor)) }
        }
        return since
    }

    /// `since` in waits of at most `cap` streams each, in order; one wait when the server
    /// gave no cap (`live.max_wait_streams` missing from `GET /v1`).
    static func split(_ since: [(key: String, cursor: String)], cap: Int?) -> [[(key: String, cursor: String)]] {
        let size = max(1, cap ?? since.count)
        return stride(from: 0, to: since.count, by: size).map { Array(since[$0..<min($0 + size, since.count)]) }
    }

    /// The unsubscribed subscriptions whose TTL has passed at `now`, the earliest opened
    /// first (the order in which they leave).
    static func due(_ all: [FerryStore.SubscriptionRecord], now: Date) -> [FerryStore.SubscriptionRecord] {
        all.filter { s in s.unsubscribedAt.map { $0 + s.ttl <= now.timeIntervalSince1970 } ?? false }.sorted { $0.opened < $1.opened }
    }

    /// What an eviction decided.
    struct Eviction: Sendable, Equatable {
        /// One due subscription's outcome: FerryKit's ``SyncEvent/evicted(stream:id:removed:keptForEdits:)``,
        /// sent when it removed rows or `ended` (it and its cursor are gone).
        struct Outcome: Sendable, Equatable {
            var key: String
            var removed: Int
            var keptForEdits: Int
            var ended: Bool
        }
        /// The rows that leave the store, sorted by resource and id.
        var remove: [RowKey] = []
        var outcomes: [Outcome] = []
        /// For each due subscription that did not end, the rows it still holds (they have edits waiting).
        var kept: [String: Set<RowKey>] = [:]
    }

    /// The due subscriptions (`due`, keys in order) leave. Each row one brought (`held`,
    /// by subscription key) that no other subscription (active, in its TTL, or due and
    /// not yet gone) and not the default stream (`heldByDefault`) holds leaves the store,
    /// unless it has edits waiting (`pending`): those stay the subscription's, which stays
    /// until a later eviction finds them uploaded or refused. A row another source holds
    /// only leaves the subscription's list; a row the store no longer has (`exists`) is
    /// not counted as removed.
    static func evict(
        due: [String], held: [String: Set<RowKey>], heldByDefault: Set<RowKey>, pending: Set<RowKey>, exists: Set<RowKey>
    ) -> Eviction {
        var holders: [RowKey: Set<String>] = [:]
        for (key, rows) in held { for row in rows { holders[row, default: []].insert(key) } }
        var out = Eviction()
        for key in due {
            var (removed, kept) = (0, Set<RowKey>())
            for row in held[key] ?? [] {
                if heldByDefault.contains(row) || holders[row, default: []].contains(where: { $0 != key }) { continue }
                guard exists.contains(row) else { continue }
                if pending.contains(row) {
                    kept.insert(row)
                } else {
                    out.remove.append(row)
                    removed += 1
                }
            }
            for row in held[key] ?? [] where !kept.contains(row) { holders[row]?.remove(key) }
            if !kept.isEmpty { out.kept[key] = kept }
            if removed > 0 || kept.isEmpty {
                out.outcomes.append(Eviction.Outcome(key: key, removed: removed, keptForEdits: kept.count, ended: kept.isEmpty))
            }
        }
        out.remove.sort { ($0.resource, $0.id) < ($1.resource, $1.id) }
        return out
    }
}
