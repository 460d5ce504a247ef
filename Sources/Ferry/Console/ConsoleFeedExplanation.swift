import FerryHTTP
import Foundation

/// "Why is my device stuck": from what the feed answered a device's cursor
/// (replayed as the user) and the facts around it, the sentences an operator
/// needs, each with a stable `kind`. A pure value, tested without I/O.
struct ConsoleFeedExplanation {
    /// The device's `since` as pasted (nil: a full sync).
    var since: String?
    /// The answer `GET /v1/changes` gave as the user: status and body.
    var status: Int
    var body: [String: Any]
    /// The feed's position now.
    var frontier: UInt64
    var nextXID: UInt64
    var horizon: UInt64
    /// The user's access grants and revocations after the cursor, oldest first.
    var access: [AccessEvent]
    /// The transaction holding the frontier back, if any.
    var oldest: OldestTransaction?
    /// How many unrevoked, unexpired tokens the user holds.
    var liveTokens: Int
    /// The resources that are access scopes (a study set, say), to name the scope row an event was about.
    var scopeResources: Set<String> = []
    /// The user's latest refused request: when, what and its code.
    var latestRefusal: (at: Int64, method: String, path: String, status: Int, code: String?)?
    /// The subscription the device asked for (`stream=<name>:<id>`); nil: the default stream.
    var stream: StreamShown? = nil

    /// A subscription, and what the user's own `GET /v1/<root>/<id>` answered.
    struct StreamShown: Equatable {
        var name: String
        var id: String
        /// The stream's root resource, and every resource a subscription carries.
        var root: String
        var resources: [String]
        /// The status of the user's `GET /v1/<root>/<id>`: 200 when they read the root row.
        var rootStatus: Int
        /// The root row's public flag, when its own flag makes it public (nil: none, or not read).
        var isPublic: Bool?
    }

    struct AccessEvent: Equatable {
        /// `grant` or `revocation`.
        var kind: String
        var xid: String
        var resource: String
        /// Rows the event covers (for a revocation, revoked stubs the feed sends).
        var rows: Int
        /// Some of the rows' ids (a grant: the scope row).
        var ids: [String]
        var at: Int64
    }

    struct OldestTransaction: Equatable {
        var xid: String
        var pid: Int?
        var application: String?
        var state: String?
        var ageMs: Int64?
    }

    struct Note: Equatable {
        var kind: String
        var text: String
    }

    /// The changes of the answer, per resource: rows, tombstones, revoked stubs.
    var summary: [(resource: String, rows: Int, tombstones: Int, revoked: Int)] {
        var order: [String] = []
        var counts: [String: (Int, Int, Int)] = [:]
        for change in body["changes"] as? [[String: Any]] ?? [] {
            guard let resource = change["resource"] as? String, let data = change["data"] as? [String: Any] else { continue }
            if counts[resource] == nil { order.append(resource) }
            var count = counts[resource] ?? (0, 0, 0)
            if data["revoked"] as? Bool == true { count.2 += 1 } else if data["is_deleted"] as? Bool == true { count.1 += 1 } else { count.0 += 1 }
            counts[resource] = count
        }
        return order.map { ($0, counts[$0]!.0, counts[$0]!.1, counts[$0]!.2) }
    }

    var cursor: ChangeCursor? { since.flatMap { $0 == "now" ? nil : ChangeCursor(token: $0) } }

    /// The cursor's highest transaction (its xid or its download's base), as
    /// the feed tests it against the next one (``BoundCursor/ahead``).
    var cursorTop: UInt64 { cursor.map { max($0.afterXID, $0.base) } ?? 0 }

    /// Whether the cursor is past this database's next transaction: restored since, or another database's.
    var isAhead: Bool { cursorTop > nextXID }

    var notes: [Note] {
        var notes: [Note] = []
        if liveTokens == 0 {
            notes.append(
                Note(
                    kind: "signed_out",
                    text: "The user holds no live token: every request of their devices gets "
                        + "401 unauthorized until they sign in again."))
        }
        switch status {
        case 400:
            notes.append(
                Note(
                    kind: "invalid_cursor",
                    text: "The feed refuses this cursor (400 invalid_query): it is not one this "
                        + "server gave out. The device must start over without since (a full sync)."))
        case 410 where isAhead:
            notes.append(
                Note(
                    kind: "cursor_ahead",
                    text: "The cursor (transaction \(cursorTop)) is ahead of this database, whose next "
                        + "transaction is \(nextXID): this one was restored from a backup to an older point, or the cursor is another "
                        + "database's. The feed answers 410 cursor_expired, and the device does a full sync."))
        case 410:
            notes.append(
                Note(
                    kind: "cursor_expired",
                    text: "The cursor is at or below the purge horizon (transaction \(horizon)): "
                        + "tombstones it had not seen were purged, so the feed answers 410 cursor_expired and the device must do a full sync."))
        case 200, 304:
            notes += streamNotes + pageNotes
        default:
            notes.append(Note(kind: "refused", text: "The feed answers \(status) \(body["code"] as? String ?? "") to this cursor."))
        }
        notes += accessNotes
        if let refusal = latestRefusal {
            notes.append(
                Note(
                    kind: "refused_request",
                    text: "The latest refused request: \(refusal.method) \(refusal.path) answered "
                        + "\(refusal.status)\(refusal.code.map { " " + $0 } ?? "") at \(Self.time(refusal.at)); see the refused requests."))
        }
        return notes
    }

    /// One note per transaction that changed the user's access: what was
    /// granted or revoked (the scope row, when the event names one) and what
    /// the feed sends for it.
    private var accessNotes: [Note] {
        var order: [String] = []
        var byXID: [String: [AccessEvent]] = [:]
        for event in access {
            if byXID[event.xid] == nil { order.append(event.xid) }
            byXID[event.xid, default: []].append(event)
        }
        return order.flatMap { xid -> [Note] in
            let events = byXID[xid] ?? []
            var notes: [Note] = []
            for grant in events where grant.kind == "grant" {
                notes.append(
                    Note(
                        kind: "access_granted",
                        text: "Access to \(grant.resource) \(grant.ids.first ?? "") was granted at "
                            + "\(Self.time(grant.at)) (transaction \(xid)): the feed sends that row and the rows it covers, old ones included."))
            }
            let revocations = events.filter { $0.kind == "revocation" }
            guard let first = revocations.first else { return notes }
            let scope = revocations.first { scopeResources.contains($0.resource) && $0.rows == 1 }
            let what = scope.map { "Access to \($0.resource) \($0.ids.first ?? "") was revoked" } ?? "Access was revoked"
            let total = revocations.reduce(0) { $0 + $1.rows }
            let parts = revocations.map { "\($0.rows) \($0.resource)" }.joined(separator: ", ")
            notes.append(
                Note(
                    kind: "access_revoked",
                    text: "\(what) at \(Self.time(first.at)) (transaction \(xid)): the feed "
                        + "sends a revoked entry for each of the \(total) rows it covered that the user can no longer read (\(parts)), "
                        + "and the device removes them."))
            return notes
        }
    }

    /// What a subscription is for this user: a row they read (publicly or
    /// not), or one they may not read, which the feed answers exactly as a
    /// stream that does not exist.
    private var streamNotes: [Note] {
        guard let stream else { return [] }
        let key = "stream=\(stream.name):\(stream.id)"
        guard stream.rootStatus == 200 else {
            let changes = body["changes"] as? [Any] ?? []
            return [
                Note(
                    kind: "stream_absent",
                    text: "The user may not read \(stream.root) \(stream.id), or no such row exists: the feed answers \(key) "
                        + "exactly as it answers a stream that does not exist, "
                        + (changes.isEmpty
                            ? "a page with nothing in it and a cursor, so the device learns nothing and holds none of its rows."
                            : "and a cursor, with only the rows the user reads without the root (such as their own member rows, "
                                + "or their tombstones) and revoked entries for rows a device held before its cursor."))
            ]
        }
        var notes = [
            Note(
                kind: "stream_readable",
                text: "The user reads \(stream.root) \(stream.id)\(stream.isPublic == true ? ", which is public" : ""): \(key) sends "
                    + "that row and every row read through it (\(stream.resources.joined(separator: ", "))) that the user may read, "
                    + "with a cursor of its own.")
        ]
        if stream.isPublic == true {
            notes.append(
                Note(
                    kind: "stream_public",
                    text: "A device's plain poll of this public stream gets the page for everyone (read as no user, "
                        + "Cache-Control: public): the same rows, but never the member rows of its root, which its members get "
                        + "through their default stream. This answer is the user's own page, read as them, which holds the member rows they read."))
        }
        return notes
    }

    private var pageNotes: [Note] {
        var notes: [Note] = []
        let changes = body["changes"] as? [Any] ?? []
        if changes.isEmpty {
            notes.append(
                Note(
                    kind: "up_to_date",
                    text: "Nothing after this cursor is readable by the user below the frontier "
                        + "(transaction \(frontier)): the device is up to date, and its poll answers an empty page (304 with If-None-Match)."))
        } else {
            let parts = summary.map { item in
                [
                    item.rows > 0 ? "\(item.rows) \(item.resource)" : nil,
                    item.tombstones > 0 ? "\(item.tombstones) deleted \(item.resource)" : nil,
                    item.revoked > 0 ? "\(item.revoked) revoked \(item.resource)" : nil,
                ].compactMap { $0 }.joined(separator: ", ")
            }
            notes.append(
                Note(
                    kind: "changes",
                    text: "The feed sends \(changes.count) \(changes.count == 1 ? "change" : "changes"): "
                        + parts.joined(separator: "; ") + "."))
        }
        if body["has_more"] as? Bool == true {
            notes.append(Note(kind: "has_more", text: "More follow: the device asks again from the answer's cursor."))
        }
        if let oldest, let holder = UInt64(oldest.xid), holder == frontier, frontier < nextXID {
            let who = [
                oldest.pid.map { "pid \($0)" }, oldest.application.flatMap { $0.isEmpty ? nil : "application \($0)" },
                oldest.state.map { "state \($0)" }, oldest.ageMs.map { "running for \(Self.duration($0))" },
            ]
            .compactMap { $0 }.joined(separator: ", ")
            notes.append(
                Note(
                    kind: "frontier_held",
                    text: "Transaction \(oldest.xid) (\(who.isEmpty ? "details hidden" : who)) is "
                        + "still running: the feed sends nothing committed at or after it until it ends, \(nextXID - frontier) "
                        + "transactions behind the newest."))
        }
        return notes
    }

    static func time(_ ms: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        return formatter.string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
    }

    static func duration(_ ms: Int64) -> String {
        ms < 1_000 ? "\(ms) ms" : ms < 120_000 ? "\(ms / 1_000) s" : "\(ms / 60_000) min"
    }

    var json: JSONValue {
        .object([
            ("cursor", cursorJSON),
            (
                "feed",
                .object([
                    ("frontier", .string(String(frontier))), ("next_xid", .string(String(nextXID))),
                    ("purge_horizon", .string(String(horizon))),
                ])
            ),
            (
                "summary",
                .array(
                    summary.map {
                        .object([
                            ("resource", .string($0.resource)), ("rows", .int($0.rows)),
                            ("tombstones", .int($0.tombstones)), ("revoked", .int($0.revoked)),
                        ])
                    })
            ),
            (
                "access",
                .array(
                    access.map {
                        .object([
                            ("kind", .string($0.kind)), ("xid", .string($0.xid)),
                            ("resource", .string($0.resource)), ("rows", .int($0.rows)),
                            ("ids", .array($0.ids.map { .string($0) })), ("at", .int(Int($0.at))),
                        ])
                    })
            ),
            (
                "oldest_transaction",
                oldest.map { oldest in
                    .object([
                        ("xid", .string(oldest.xid)), ("pid", oldest.pid.map { .int($0) } ?? .null),
                        ("application", oldest.application.map { .string($0) } ?? .null),
                        ("state", oldest.state.map { .string($0) } ?? .null),
                        ("age_ms", oldest.ageMs.map { .int(Int($0)) } ?? .null),
                    ])
                } ?? .null
            ),
            ("live_tokens", .int(liveTokens)),
            (
                "stream",
                stream.map { stream in
                    .object([
                        ("name", .string(stream.name)), ("id", .string(stream.id)), ("root", .string(stream.root)),
                        ("resources", .array(stream.resources.map { .string($0) })),
                        ("root_readable", .bool(stream.rootStatus == 200)),
                        ("public", stream.isPublic.map { .bool($0) } ?? .null),
                    ])
                } ?? .null
            ),
            ("notes", .array(notes.map { .object([("kind", .string($0.kind)), ("text", .string($0.text))]) })),
        ])
    }

    private var cursorJSON: JSONValue {
        guard let since, since != "now" else {
            return .object([("kind", .string(since == nil ? "start" : "now"))])
        }
        guard let cursor = ChangeCursor(token: since) else { return .object([("kind", "invalid")]) }
        var members: [(String, JSONValue)] = [
            ("kind", .string(cursor.position == nil ? "frontier" : "position")),
            ("xid", .string(String(cursor.afterXID))),
        ]
        if let position = cursor.position {
            members += [("resource", .string(position.resource)), ("id", .string(position.id))]
        }
        return .object(members)
    }
}
