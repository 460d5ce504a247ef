import Foundation

/// Something the app should hear about: nothing FerryKit resolves or refuses is silent.
public enum SyncEvent: Sendable, Equatable {
    /// The server's and the local version of a row both changed these fields;
    /// the merge (or the resource's resolver) decided them, and the local
    /// result will be uploaded.
    case conflict(resource: String, id: String, conflicts: [ThreeWayMerge.Conflict])
    /// The server refused these operations for good (a 4xx other than 401,
    /// 409, 412); `problem` is its problem+json. Operations that do not depend
    /// on them go on.
    case rejected(resource: String, id: String, status: Int, problem: Data)
    /// The row went away on the server, deleted (`revoked` false) or no longer
    /// readable by this user (`revoked` true; an initial sync that no longer
    /// finds a row it held cannot tell which, and says deleted); `discardedEdits` says whether
    /// local edits of it could not be uploaded (they are marked rejected).
    /// `localVersion` is the row as the app last saw it, with those edits, when
    /// there were any: what to do with them is the app's choice (show them,
    /// or keep them as a new row with ``FerryStore/recreate(_:from:)``).
    case removed(resource: String, id: String, revoked: Bool, discardedEdits: Bool, localVersion: RowData? = nil)
    /// The row's operations have been sent `attempts` times (the engine's
    /// `stalledAfter`) and none settled them: no answer, 5xx or 429 each time.
    /// They stay queued and keep being retried; `lastError` is the latest
    /// failure. Told once per row when it crosses the threshold.
    case stalled(resource: String, id: String, attempts: Int, lastError: String?)
    /// An unsubscribed stream's TTL passed: `removed` rows that no other
    /// subscription and not the default stream held left the store;
    /// `keptForEdits` rows stay while they have edits waiting for upload, and
    /// leave with a later sync once those are uploaded or refused (then this
    /// event comes again with what left). `keptForEdits` 0: the subscription is gone.
    case evicted(stream: String, id: String, removed: Int, keptForEdits: Int)
}

/// Where sync stands, for the app's status line.
public struct SyncStatus: Sendable, Equatable {
    /// The last attempt reached the server.
    public var online: Bool = false
    /// Operations waiting for upload.
    public var pending: Int = 0
    /// Operations the server refused.
    public var rejected: Int = 0
    /// The last failure, readable by people.
    public var lastError: String?
    /// When the next attempt is due after a failure, if one is scheduled.
    public var nextAttempt: Date?
    /// When the oldest operation still waiting for upload was made: a queue
    /// that does not drain shows here, whatever the reason.
    public var oldestPending: Date?
    /// Waiting operations sent `stalledAfter` times or more without being settled
    /// (``FerryStore/outbox()`` lists them with their last error).
    public var stalled: Int = 0
    /// When the request now awaiting its answer was sent; nil between requests.
    /// A value far in the past means a request that hangs.
    public var inFlightSince: Date?
    /// Rows received so far in this sync.
    public var received: Int = 0
    /// Sync is paused until the app signs in again (two 401s in a row).
    public var paused: Bool = false
    /// What ``SyncEngine/sync()`` is doing now.
    public var phase: SyncPhase = .idle
    /// Whether the engine syncs by itself (``SyncEngine/start(uploadDelay:longPollWait:)``)
    /// or only when the app calls ``SyncEngine/sync()``.
    public var mode: SyncMode = .manual
    /// In continuous mode, a long poll is open on the server: other devices'
    /// edits arrive as they commit. False between polls, while backing off
    /// after an error, and in manual mode.
    public var connected: Bool = false
    /// While the store fills for the first time (or again after `cursor_expired`):
    /// how far it has come. Nil otherwise.
    public var initialSync: InitialSyncProgress?

    public init() {}
}

/// The part of a sync under way.
public enum SyncPhase: Sendable, Equatable {
    case idle
    case uploading
    /// Following the changes feed, or filling the store by Index pages (then
    /// ``SyncStatus/initialSync`` says how far).
    case downloading
}

/// How the engine runs.
public enum SyncMode: Sendable, Equatable {
    /// Only when the app calls ``SyncEngine/sync()``.
    case manual
    /// By itself, between ``SyncEngine/start(uploadDelay:longPollWait:)`` and ``SyncEngine/stop()``.
    case continuous
}
