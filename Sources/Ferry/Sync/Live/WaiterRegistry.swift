import Foundation
import FerryBase
import FerryHTTP
import Synchronization

/// This instance's waiting long polls and event streams, and which commit
/// hints (``ChangeHint``) concern each: the one place the listener's thread
/// and the request handlers meet.
///
/// A waiter is found by the hints that may concern its caller:
/// - a hint naming the caller (they wrote the table, or gained or lost access);
/// - a hint naming a scope row the caller can read (``ScopeKey``): the scope
///   rows each waiting user can read are loaded with their first check (one
///   statement per scope table, under their Row Level Security) and dropped
///   when a hint says they may have changed (the user wrote a scope table, or
///   gained or lost access); until they are loaded again, every scope hint
///   concerns that user;
/// - a hint for everyone (a write by no Ferry user);
/// and only when it follows the hint's resource. A waiter on a stream (a
/// subscription) is found by its stream's root row instead of its user's
/// scope rows: a hint naming that row, or a scope row of another table (which
/// may hang below the root), concerns it. A waiter on several streams
/// (`POST /v1/changes/wait`) is found by each of them, and remembers which
/// of its streams the hints since its last check may concern
/// (``takeCandidates(_:)``), so that its next check looks at those only. A
/// waiter whose caller is not known yet (its first check has not named them)
/// is concerned by every hint.
///
/// Being concerned is cheap to get wrong in one direction only: a wake too
/// many costs one check of the feed, a wake too few a change that waits for
/// the long poll's deadline. Hence "every hint" wherever the registry cannot tell.
final class WaiterRegistry: Sendable {
    /// How many may wait.
    struct Limits: Sendable {
        var perInstance: Int
        var perUser: Int
    }

    /// A scope row, by its resource's name and its id as text.
    struct ScopeKey: Hashable, Sendable {
        let scope: String
        let id: String
    }

    private struct Waiter {
        let ticket: any LiveTicket
        /// Nil until a check has named the caller.
        var user: String?
        /// The resources it follows; nil for all.
        let resources: Set<String>?
        /// Re-check once the feed's frontier is past this: it has changes the
        /// frontier still holds back (an older transaction runs).
        var heldBelow: UInt64?
        /// Where an event stream has got to (its last event's cursor).
        var cursor: String?
        /// The wake epoch of its registration or its latest wake: a check
        /// that started at this epoch or later answers it (``SharedChecks``).
        var checkFrom: UInt64
        /// The root rows of the streams it follows besides the default one: one
        /// for a subscription's long poll, any number for a wait on several streams.
        var streams: Set<ScopeKey> = []
        /// Those streams as the device named them (`<name>:<id>`), for the
        /// console: two streams may share a root row.
        var names: [String] = []
        /// Whether it follows the default stream.
        var followsDefault = true
        /// Whether it waits on several streams (`POST /v1/changes/wait`, even with one), and so keeps ``candidates``.
        var several = false
        /// Of a waiter on several streams: those a hint, the frontier or a wake of
        /// everyone may have given news since its last check (nil: the default stream).
        var candidates: Set<ScopeKey?> = []
        /// The hash of its bearer when it is one of Ferry's tokens (``StreamChecks`` checks them in bulk).
        var token: String? = nil
        /// When it was registered (a long poll's first pass, a wait's, a stream's start): for the console.
        var since = Date()
    }

    private struct UserWaiters {
        var tickets: Set<ObjectIdentifier> = []
        /// The scope rows the user can read; nil until loaded, or after a hint said they changed.
        var scopes: Set<ScopeKey>?
    }

    private struct State {
        var waiters: [ObjectIdentifier: Waiter] = [:]
        var users: [String: UserWaiters] = [:]
        /// Users (with waiters) by the scope rows they can read.
        var readers: [ScopeKey: Set<String>] = [:]
        /// Users with waiters whose scope rows are not loaded.
        var unscoped: Set<String> = []
        /// Waiters whose caller is not known yet.
        var anonymous: Set<ObjectIdentifier> = []
        /// Stream waiters by their stream's root row.
        var streamWaiters: [ScopeKey: Set<ObjectIdentifier>] = [:]
        /// Stream waiters by their stream's root table.
        var streamRoots: [String: Set<ObjectIdentifier>] = [:]
        /// Waiters with a `heldBelow`.
        var held: Set<ObjectIdentifier> = []
        /// Synced tables by oid, as hints name them.
        var tables: [UInt32: String] = [:]
        /// The scope tables' names: a user's write to one may change the scope rows they can read.
        var scopeTables: Set<String> = []
        /// Moves with every delivery of hints, wake of everyone, or pass of
        /// the frontier, under the lock that wakes: a check that read epoch E
        /// before it started saw every commit that woke a waiter up to E.
        var epoch: UInt64 = 0
    }

    let limits: Limits
    private let state = Locked(State())
    /// Hints delivered, and wakes they (or the frontier, or a fallback check) caused: for /metrics and the tests.
    let hintCount = Atomic<Int>(0)
    let wakeCount = Atomic<Int>(0)
    /// Checks of the feed that waiters made (each wake costs one, when it finds PostgreSQL).
    let checkCount = Atomic<Int>(0)
    /// Waiters answered by another waiter's check (``SharedChecks``), without a query of their own.
    let sharedCount = Atomic<Int>(0)
    /// Of those, default-stream waiters answered from another user's check (``DefaultChecks``).
    let defaultSharedCount = Atomic<Int>(0)
    /// Bulk lookups of waiters' tokens (``StreamChecks``, ``DefaultChecks``), and the tokens they looked up.
    let tokenLookupCount = Atomic<Int>(0)
    let tokensLookedUpCount = Atomic<Int>(0)
    /// Woken waiters whose check met a passing failure (a 503), woken again a second later (``LiveFeed/retrySoon(_:)``).
    let retryCount = Atomic<Int>(0)
    /// Waiters that started waiting for the frontier: their check found changes an older
    /// transaction holds back. Each adds up to a frontier watch's first poll to its answer.
    let holdCount = Atomic<Int>(0)
    /// Checks running now: a waiter is parked once its check is done.
    let checksRunning = Atomic<Int>(0)
    /// Called when a waiter starts waiting for the frontier, so the listener watches it.
    private let frontierWatched: @Sendable () -> Void

    init(limits: Limits, frontierWatched: @escaping @Sendable () -> Void = {}) {
        self.limits = limits
        self.frontierWatched = frontierWatched
    }

    /// Counts one bulk token lookup (nil: it failed).
    func countLookup(_ lookup: TokenVouchers?) {
        tokenLookupCount.add(1, ordering: .relaxed)
        tokensLookedUpCount.add(lookup?.lookedUp ?? 0, ordering: .relaxed)
    }

    /// Waiters right now.
    var count: Int { state.withLock { $0.waiters.count } }

    /// Waiters waiting for the frontier right now.
    var heldCount: Int { state.withLock { $0.held.count } }

    /// Waiters whose caller is not known yet.
    var anonymousCount: Int { state.withLock { $0.anonymous.count } }

    // MARK: Requests

    /// Why a waiter was not added.
    enum Refusal: Error {
        /// The instance holds `perInstance` waiters.
        case instanceFull
        /// The user holds `perUser` waiters.
        case userFull
    }

    /// Adds a waiter, or says which limit refuses it. `user` when already
    /// known (a cached token), `resources` nil for all, `stream` the root row
    /// of the stream it follows (nil: the default stream) and `streamName`
    /// that stream as the device named it (`<name>:<id>`), `token` its
    /// bearer's hash when that is one of Ferry's tokens.
    func register(
        _ ticket: any LiveTicket, user: String?, resources: Set<String>?, stream: ScopeKey? = nil, streamName: String? = nil,
        token: String? = nil
    ) -> Refusal? {
        register(
            ticket, user: user, resources: resources, streams: stream.map { [$0] } ?? [], names: streamName.map { [$0] } ?? [],
            followsDefault: stream == nil, several: false, token: token)
    }

    /// Adds a waiter on several streams (`POST /v1/changes/wait`): the default
    /// one when `followsDefault`, and those of the root rows `streams`, named
    /// `names` (`<name>:<id>`, for the console). It counts as one waiter
    /// against the limits, and keeps which of its streams may have news
    /// (``takeCandidates(_:)``) unless `several` is false (a long poll or
    /// event stream of one stream, which checks that one).
    func register(
        _ ticket: any LiveTicket, user: String?, resources: Set<String>?, streams: Set<ScopeKey>, names: [String] = [],
        followsDefault: Bool, several: Bool = true, token: String? = nil
    ) -> Refusal? {
        let id = ObjectIdentifier(ticket)
        let refusal = state.withLock { state -> Refusal? in
            if state.waiters[id] != nil { return nil }
            guard state.waiters.count < limits.perInstance else { return .instanceFull }
            if let user, (state.users[user]?.tickets.count ?? 0) >= limits.perUser { return .userFull }
            state.waiters[id] = Waiter(
                ticket: ticket, user: nil, resources: resources, checkFrom: state.epoch, streams: streams, names: names.sorted(),
                followsDefault: followsDefault, several: several, token: token)
            state.anonymous.insert(id)
            for stream in streams {
                state.streamWaiters[stream, default: []].insert(id)
                state.streamRoots[stream.scope, default: []].insert(id)
            }
            if let user { Self.name(id, user, in: &state) }
            return nil
        }
        // Captures the id, not the ticket: the ticket keeps this closure.
        if refusal == nil { ticket.whenAbandoned { [self] in remove(id) } }
        return refusal
    }

    /// The caller of a registered waiter, named by its check, with the scope
    /// rows they can read when the check loaded them. False when the user
    /// already has as many waiters as they may: the waiter is removed.
    func identify(_ ticket: any LiveTicket, user: String, scopes: Set<ScopeKey>?) -> Bool {
        let id = ObjectIdentifier(ticket)
        return state.withLock { state in
            guard state.waiters[id] != nil else { return true }
            if state.waiters[id]?.user == nil {
                guard (state.users[user]?.tickets.count ?? 0) < limits.perUser else {
                    Self.remove(id, from: &state)
                    return false
                }
                Self.name(id, user, in: &state)
            }
            if let scopes { Self.load(scopes, for: user, in: &state) }
            return true
        }
    }

    /// Whether a check for `user` (nil: not known yet) should load the scope rows they can read.
    func needsScopes(_ user: String?) -> Bool {
        guard let user else { return true }
        return state.withLock { $0.users[user]?.scopes == nil }
    }

    /// Marks a waiter as having changes the frontier holds back below `frontier`
    /// (nil: none): it is woken once the frontier has passed it.
    func hold(_ ticket: any LiveTicket, below frontier: UInt64?) {
        let id = ObjectIdentifier(ticket)
        let watch = state.withLock { state -> Bool in
            guard state.waiters[id] != nil else { return false }
            state.waiters[id]?.heldBelow = frontier
            if frontier == nil {
                state.held.remove(id)
                return false
            }
            return state.held.insert(id).inserted
        }
        if watch {
            holdCount.add(1, ordering: .relaxed)
            frontierWatched()
        }
    }

    /// The epoch a check must have started at (or after) to answer this waiter:
    /// that of its registration or its latest wake. Nil when it is not registered.
    func checkFrom(_ ticket: any LiveTicket) -> UInt64? {
        state.withLock { $0.waiters[ObjectIdentifier(ticket)]?.checkFrom }
    }

    /// The epoch now, read by a check before it starts (``SharedChecks``).
    var epoch: UInt64 { state.withLock { $0.epoch } }

    /// One of a user's open waits on this instance, as the console shows it:
    /// the server keeps no record of a device's subscriptions, but a device
    /// that waits names the streams it follows.
    struct Wait: Sendable, Codable {
        /// Whether it follows the default stream.
        let followsDefault: Bool
        /// Its other streams as the device named them (`<name>:<id>`), sorted.
        let streams: [String]
        /// The resources it follows; nil for all.
        let resources: Set<String>?
        /// A wait on several streams (`POST /v1/changes/wait`) rather than a long poll or event stream of one.
        let several: Bool
        let since: Date
    }

    /// `user`'s open waits on this instance, the oldest first.
    func waits(of user: String) -> [Wait] {
        state.withLock { state in
            (state.users[user]?.tickets ?? []).compactMap { id -> Wait? in
                guard let waiter = state.waiters[id] else { return nil }
                return Wait(
                    followsDefault: waiter.followsDefault,
                    streams: waiter.names, resources: waiter.resources,
                    several: waiter.several, since: waiter.since)
            }
        }.sorted { $0.since < $1.since }
    }

    /// The token hashes of the waiters on the default stream (``DefaultChecks``).
    func defaultTokens() -> [String] {
        state.withLock { state in state.waiters.values.compactMap { $0.followsDefault ? $0.token : nil } }
    }

    /// The token hashes of the waiters on the stream of `root` (``StreamChecks``).
    func tokens(onStream root: ScopeKey) -> [String] {
        state.withLock { state in (state.streamWaiters[root] ?? []).compactMap { state.waiters[$0]?.token } }
    }

    /// The streams of a waiter on several streams that may have news since it
    /// last took them (nil: the default stream), emptied: its check looks at
    /// these. Taken after the ticket is armed, so that a hint delivered during
    /// the check both adds its stream here and wakes the waiter again.
    func takeCandidates(_ ticket: any LiveTicket) -> Set<ScopeKey?> {
        state.withLock { state in
            let id = ObjectIdentifier(ticket)
            guard let candidates = state.waiters[id]?.candidates else { return [] }
            state.waiters[id]?.candidates = []
            return candidates
        }
    }

    /// Marks one stream of a waiter on several streams as still to check (its check could not reach PostgreSQL).
    func note(_ ticket: any LiveTicket, candidate stream: ScopeKey?) {
        state.withLock { state in
            let id = ObjectIdentifier(ticket)
            guard state.waiters[id]?.several == true else { return }
            state.waiters[id]?.candidates.insert(stream)
        }
    }

    /// As ``hold(_:below:)``, keeping an earlier hold that is lower: a waiter on
    /// several streams whose check looked at some of them only may still be
    /// held for another.
    func holdAlso(_ ticket: any LiveTicket, below frontier: UInt64) {
        let id = ObjectIdentifier(ticket)
        let watch = state.withLock { state -> Bool in
            guard let waiter = state.waiters[id] else { return false }
            state.waiters[id]?.heldBelow = min(waiter.heldBelow ?? frontier, frontier)
            return state.held.insert(id).inserted
        }
        if watch {
            holdCount.add(1, ordering: .relaxed)
            frontierWatched()
        }
    }

    /// An event stream's cursor, kept between its passes.
    func cursor(of ticket: any LiveTicket) -> String? {
        state.withLock { $0.waiters[ObjectIdentifier(ticket)]?.cursor }
    }

    func setCursor(_ cursor: String, of ticket: any LiveTicket) {
        state.withLock { $0.waiters[ObjectIdentifier(ticket)]?.cursor = cursor }
    }

    /// Forgets a waiter (answered, or abandoned).
    func remove(_ ticket: any LiveTicket) {
        remove(ObjectIdentifier(ticket))
    }

    private func remove(_ id: ObjectIdentifier) {
        state.withLock { state in Self.remove(id, from: &state) }
    }

    // MARK: The listener

    /// The synced tables by oid, from the listener's connection.
    func setTables(_ tables: [UInt32: String], scopeTables: Set<String>) {
        state.withLock { state in
            state.tables = tables
            state.scopeTables = scopeTables
        }
    }

    /// Wakes the waiters these hints may concern.
    func deliver(_ hints: [ChangeHint]) {
        wake(woken(by: hints))
    }

    /// Marks the waiters these hints may concern as woken (the epoch moves, as
    /// for ``deliver(_:)``) and returns their tickets, for the caller to
    /// ``wake(_:)``: ``HintOutbox`` wakes a few on the writer's thread and
    /// hands a fan-out's rest to its own.
    func woken(by hints: [ChangeHint]) -> [any LiveTicket] {
        let woken = state.withLock { state -> [any LiveTicket] in
            var ids: Set<ObjectIdentifier> = state.anonymous
            for id in state.anonymous { Self.note(id, .all, in: &state) }
            for hint in hints { Self.concerned(by: hint, in: &state, into: &ids) }
            return Self.woken(ids, in: &state)
        }
        hintCount.add(hints.count, ordering: .relaxed)
        return woken
    }

    /// Resumes these waiters (``woken(by:)``'s tickets).
    func wake(_ tickets: some Collection<any LiveTicket>) {
        guard !tickets.isEmpty else { return }
        wakeCount.add(tickets.count, ordering: .relaxed)
        for ticket in tickets { ticket.wake() }
    }

    /// Wakes every waiter: the listener came back (what committed meanwhile
    /// sent no hint it heard), or it is down and this is the periodic check.
    func wakeAll() {
        wake(
            state.withLock { state in
                for id in state.waiters.keys { Self.note(id, .all, in: &state) }
                return Self.woken(Set(state.waiters.keys), in: &state)
            })
    }

    /// The lowest frontier a held waiter waits for the feed to pass; nil when none waits.
    var lowestHeld: UInt64? {
        state.withLock { state in state.held.compactMap { state.waiters[$0]?.heldBelow }.min() }
    }

    /// The feed's frontier is now `frontier`: wakes the held waiters it has passed.
    func frontierPassed(_ frontier: UInt64) {
        let woken = state.withLock { state -> [any LiveTicket] in
            var ids: Set<ObjectIdentifier> = []
            for id in state.held {
                guard let below = state.waiters[id]?.heldBelow, frontier > below else { continue }
                state.waiters[id]?.heldBelow = nil
                Self.note(id, .all, in: &state)
                ids.insert(id)
            }
            state.held.subtract(ids)
            // The frontier passing is no commit: the epoch moves only for those it wakes.
            return ids.isEmpty ? [] : Self.woken(ids, in: &state)
        }
        wake(woken)
    }

    // MARK: State changes, under the lock

    /// Moves the epoch and marks `ids` as woken at it: each needs a check
    /// that starts from now. Their tickets, to wake once the lock is let go.
    private static func woken(_ ids: Set<ObjectIdentifier>, in state: inout State) -> [any LiveTicket] {
        state.epoch += 1
        return ids.compactMap { id in
            state.waiters[id]?.checkFrom = state.epoch
            return state.waiters[id]?.ticket
        }
    }

    private static func name(_ id: ObjectIdentifier, _ user: String, in state: inout State) {
        state.waiters[id]?.user = user
        state.anonymous.remove(id)
        if state.users[user] == nil {
            state.users[user] = UserWaiters()
            state.unscoped.insert(user)
        }
        state.users[user]?.tickets.insert(id)
    }

    private static func load(_ scopes: Set<ScopeKey>, for user: String, in state: inout State) {
        guard state.users[user] != nil else { return }
        forgetScopes(of: user, in: &state)
        state.users[user]?.scopes = scopes
        state.unscoped.remove(user)
        for key in scopes { state.readers[key, default: []].insert(user) }
    }

    private static func forgetScopes(of user: String, in state: inout State) {
        guard let scopes = state.users[user]?.scopes else { return }
        for key in scopes {
            state.readers[key]?.remove(user)
            if state.readers[key]?.isEmpty == true { state.readers[key] = nil }
        }
        state.users[user]?.scopes = nil
        state.unscoped.insert(user)
    }

    private static func remove(_ id: ObjectIdentifier, from state: inout State) {
        guard let waiter = state.waiters.removeValue(forKey: id) else { return }
        state.anonymous.remove(id)
        state.held.remove(id)
        for stream in waiter.streams {
            state.streamWaiters[stream]?.remove(id)
            if state.streamWaiters[stream]?.isEmpty == true { state.streamWaiters[stream] = nil }
            state.streamRoots[stream.scope]?.remove(id)
            if state.streamRoots[stream.scope]?.isEmpty == true { state.streamRoots[stream.scope] = nil }
        }
        guard let user = waiter.user else { return }
        state.users[user]?.tickets.remove(id)
        if state.users[user]?.tickets.isEmpty == true {
            forgetScopes(of: user, in: &state)
            state.users[user] = nil
            state.unscoped.remove(user)
        }
    }

    /// Adds to `ids` the waiters `hint` may concern.
    private static func concerned(by hint: ChangeHint, in state: inout State, into ids: inout Set<ObjectIdentifier>) {
        // Table 0 (an access change) and tables not (yet) known concern every resource.
        let resource = hint.table == 0 ? nil : state.tables[hint.table]
        let everyResource = hint.table == 0 || resource == nil
        func follows(_ id: ObjectIdentifier) -> Bool {
            guard !everyResource, let resource, let followed = state.waiters[id]?.resources else { return true }
            return followed.contains(resource)
        }
        func add(_ id: ObjectIdentifier, _ news: News) {
            ids.insert(id)
            note(id, news, in: &state)
        }
        func addUser(_ user: String, streams: Bool = true) {
            for id in state.users[user]?.tickets ?? [] where follows(id) {
                if streams {
                    add(id, .all)
                } else if state.waiters[id]?.followsDefault == true {
                    add(id, .defaultStream)
                }
            }
        }
        switch hint.target {
        case .everyone:
            for id in state.waiters.keys where follows(id) { add(id, .all) }
        case .user(let user):
            addUser(user)
            // Access gained or lost, or a scope row written: the rows they can read may differ.
            if hint.table == 0 || resource.map(state.scopeTables.contains) != false {
                forgetScopes(of: user, in: &state)
            }
        case .scope(let table, let id):
            guard let scope = state.tables[table] else {
                for id in state.waiters.keys where follows(id) { add(id, .all) }
                return
            }
            let key = ScopeKey(scope: scope, id: id)
            // The default stream's waiters, by the scope rows their users read.
            for user in state.readers[key] ?? [] { addUser(user, streams: false) }
            for user in state.unscoped { addUser(user, streams: false) }
            // Streams, by their root row; a scope row of another table may hang below a stream's root.
            for id in state.streamWaiters[key] ?? [] where follows(id) { add(id, .stream(key)) }
            for (root, waiters) in state.streamRoots where root != scope {
                for id in waiters where follows(id) { add(id, .streams(ofRoot: root)) }
            }
        }
    }

    /// Which of a waiter's streams a wake may concern.
    private enum News {
        case all
        case defaultStream
        case stream(ScopeKey)
        /// Its streams whose root row is of this table.
        case streams(ofRoot: String)
    }

    /// Records, for a waiter on several streams, which of them may have news.
    private static func note(_ id: ObjectIdentifier, _ news: News, in state: inout State) {
        guard let waiter = state.waiters[id], waiter.several else { return }
        var candidates = waiter.candidates
        switch news {
        case .all:
            for stream in waiter.streams { candidates.insert(stream) }
            if waiter.followsDefault { candidates.insert(nil) }
        case .defaultStream:
            candidates.insert(nil)
        case .stream(let key):
            candidates.insert(key)
        case .streams(let root):
            for stream in waiter.streams where stream.scope == root { candidates.insert(stream) }
        }
        state.waiters[id]?.candidates = candidates
    }
}

/// What the registry wakes: a parked exchange's ticket (FerryHTTP's
/// ``ParkingTicket``), or a test's stand-in.
protocol LiveTicket: AnyObject, Sendable {
    func wake()
    func whenAbandoned(_ body: @escaping @Sendable () -> Void)
}

extension ParkingTicket: LiveTicket {}
