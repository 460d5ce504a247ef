import Foundation

/// The subscription rules FerryWeb shares (clients/conformance/subscriptions.json):
/// the download queue's order, what a stream does after a page, the streams a wait
/// names and its split at the server's cap, what an eviction removes and when the
/// next one is due. Pure: the
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
    /// without synced subscriptions, and while a subscription waits in the queue: the
    /// queue downloads first, and the waits come after it.
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

    /// The most streams one wait names when the server does not say
    /// (`live.max_wait_streams` missing from `GET /v1`): the setting's default. One
    /// wait of every stream would be refused (400) past the server's real cap, and the
    /// device would follow its subscriptions only after each long poll.
    static let defaultWaitCap = 100

    /// The most waits held at once, as FerryWeb's `maxWaits`. Each holds a connection
    /// for its whole wait (URLSession opens 4 to a host on iOS by default, a browser 6
    /// to an origin) and counts as one waiter against the user's
    /// `live.max_waiters_per_user` (16), which the user's other devices share.
    static let maxWaits = 4

    /// The waits that cover `since`, and the streams left out of them.
    struct WaitPlan {
        /// At most ``maxWaits`` waits of at most the cap's streams each, in order.
        var waits: [[(key: String, cursor: String)]]
        /// The streams beyond them: not waited on, fetched after every answer instead.
        var unwaited: [(key: String, cursor: String)]
    }

    /// `since` in waits of at most `cap` streams each (``defaultWaitCap`` when the
    /// server gave none), in order, at most ``maxWaits`` of them.
    static func plan(_ since: [(key: String, cursor: String)], cap: Int?) -> WaitPlan {
        let size = max(1, cap ?? defaultWaitCap)
        let waited = min(since.count, size * maxWaits)
        let waits = stride(from: 0, to: waited, by: size).map { Array(since[$0..<min($0 + size, waited)]) }
        return WaitPlan(waits: waits, unwaited: Array(since[waited...]))
    }

    /// The unsubscribed subscriptions whose TTL has passed at `now`, the earliest opened
    /// first (the order in which they leave).
    static func due(_ all: [FerryStore.SubscriptionRecord], now: Date) -> [FerryStore.SubscriptionRecord] {
        all.filter { s in s.unsubscribedAt.map { $0 + s.ttl <= now.timeIntervalSince1970 } ?? false }.sorted { $0.opened < $1.opened }
    }

    /// When the next eviction is due after `now`: the earliest end of a TTL still
    /// running (an unsubscribed subscription with `unsubscribedAt + ttl > now`); nil when
    /// none runs. Continuous mode wakes then, so a device that only listens evicts on
    /// time. One already due is not counted: the eviction at `now` took it, and one it
    /// kept for edits waiting leaves with the eviction after their upload (a round).
    static func nextEviction(_ all: [FerryStore.SubscriptionRecord], now: Date) -> Date? {
        let at = now.timeIntervalSince1970
        return all.compactMap { s in s.unsubscribedAt.map { $0 + s.ttl } }.filter { $0 > at }.min().map(Date.init(timeIntervalSince1970:))
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

    /// What the default stream's revoked entries spare (``spare(revoked:held:all:)``).
    struct Spared: Sendable, Equatable {
        /// The revoked rows that stay, sorted by resource and id: no longer the default stream's, only their subscriptions'.
        var rows: [RowKey] = []
        /// The subscriptions (keys, sorted) that download their stream again from the start.
        var restart: [String] = []
    }

    /// A revoked entry of the default stream says only that the owner and membership
    /// rules no longer reach a row; a subscription may still (issue 46, seed 1791; a
    /// collaborator removed from a public set they subscribed to). A row of `revoked`
    /// that an active subscription holds (`held`, its rows by key; one unsubscribed, in
    /// its TTL, does not count) stays, and each such subscription downloads its stream
    /// again from the start (FerryStore+SparedRevocations.swift). The rest is removed as
    /// the entry says.
    static func spare(revoked: Set<RowKey>, held: [String: Set<RowKey>], all: [FerryStore.SubscriptionRecord]) -> Spared {
        let active = Set(all.filter { $0.unsubscribedAt == nil }.map(\.key))
        var rows = Set<RowKey>(), restart: [String] = []
        for (key, holds) in held where active.contains(key) {
            let spared = holds.intersection(revoked)
            guard !spared.isEmpty else { continue }
            rows.formUnion(spared)
            restart.append(key)
        }
        return Spared(rows: rows.sorted { ($0.resource, $0.id) < ($1.resource, $1.id) }, restart: restart.sorted())
    }
}
