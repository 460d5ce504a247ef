import Foundation
import GRDB

/// One subscription of this device to a server stream (`GET /v1/changes?stream=<name>:<id>`,
/// docs/API.md "Subscriptions"): a public set the user opened, a board
/// starred to keep offline. Made by ``SyncEngine/subscribe(stream:id:ttl:priority:)``
/// (or its typed form), kept in the store, so that it survives restarts and
/// offline periods; this value is only its name and a way to read its state.
public struct StreamSubscription: Sendable, Hashable {
    /// The stream's name, as the server declares it (`ferry.sync_stream('set', ...)`).
    public let stream: String
    /// The id of the stream's root row (the set).
    public let id: String
    let store: FerryStore

    init(stream: String, id: String, store: FerryStore) {
        (self.stream, self.id, self.store) = (stream, id, store)
    }

    /// The subscription's state now.
    public func state() throws -> SubscriptionState {
        try store.database.read { db in try FerryStore.subscriptionState(db, stream: stream, id: id) }
    }

    /// Its state, then each change of it (for a spinner or a "Downloaded" badge).
    public func states() -> AsyncValueObservation<SubscriptionState> {
        let (stream, id) = (stream, id)
        return ValueObservation.tracking { db in try FerryStore.subscriptionState(db, stream: stream, id: id) }
            .removeDuplicates()
            .values(in: store.database)
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.stream == rhs.stream && lhs.id == rhs.id && lhs.store === rhs.store
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(stream)
        hasher.combine(id)
    }
}

/// Where a subscription stands.
public enum SubscriptionState: Sendable, Equatable {
    /// Waiting its turn in the download queue (or for the network).
    case queued
    /// Its pages are downloading now.
    case syncing
    /// It has reached the end of its stream once; later changes keep arriving
    /// with each sync.
    case synced
    /// The server refused the stream for good (an unknown stream name, an id
    /// that is not of its type): the problem's detail. It left the queue.
    /// A stream the user may not read is not refused: the server answers it
    /// as an empty stream, so that it reveals nothing, and it shows as synced.
    case refused(String)
    /// Unsubscribed: not downloaded any more, its rows kept as a warm cache
    /// until `evictsAt` (subscribing again resumes it from its cursor).
    case unsubscribed(evictsAt: Date)
    /// No such subscription (never made, or evicted).
    case none
}

/// How long an unsubscribed stream's rows stay in the store.
public struct SubscriptionTTL: Sendable, Hashable, Comparable {
    public let seconds: TimeInterval

    public init(seconds: TimeInterval) { self.seconds = max(0, seconds) }

    public static func seconds(_ n: Double) -> SubscriptionTTL { SubscriptionTTL(seconds: n) }
    public static func minutes(_ n: Double) -> SubscriptionTTL { SubscriptionTTL(seconds: n * 60) }
    public static func hours(_ n: Double) -> SubscriptionTTL { SubscriptionTTL(seconds: n * 3_600) }
    public static func days(_ n: Double) -> SubscriptionTTL { SubscriptionTTL(seconds: n * 86_400) }
    /// The rows leave with the first sync after unsubscribing.
    public static let zero = SubscriptionTTL(seconds: 0)
    /// A day: what ``SyncEngine/subscribe(stream:id:ttl:priority:)`` keeps by default (FerryWeb's `defaultTTL`).
    public static let `default` = SubscriptionTTL.days(1)

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.seconds < rhs.seconds }
}

/// A subscription's place in the download queue: higher first; within one
/// priority, the most recently opened first.
public enum SubscriptionPriority: Int, Sendable, Hashable, Comparable, CaseIterable {
    case low = 0
    case normal = 1
    case high = 2

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A record type that is the root of a server stream, so that the app
/// subscribes with its type: `engine.subscribe(StudySet.self, id: set.id)`.
///
/// ```swift
/// extension StudySet: FerryStreamRoot { static let stream = "set" }
/// ```
public protocol FerryStreamRoot: FerryRecord {
    /// The stream's name, as the server declares it (`ferry.sync_stream('set', scope => 'app.study_sets')`).
    static var stream: String { get }
}
