/// One NOTIFY on channel `ferry_changes`: who a committed change may concern,
/// never the row itself (migration 0017 writes them). The payload is
/// `<xid> <table oid> s <scope table oid> <scope row id>`,
/// `<xid> <table oid> u <user id>` or `<xid> <table oid> *`. Ferry's own
/// writes collect them in their transaction instead (core 0028), or Ferry
/// makes them of the rows its one-row UPDATE returned (``RowHints``), and the
/// live feed's `HintOutbox` sends them after the commit, several to a payload.
/// Here, beside ``RowHints``, because both the SQL triggers' text and Ferry's
/// own hints are this value: the gateway hands the outbox values, not text to
/// parse again (issue 47 item 4: parsing cost a PATCH ~15,000 instructions).
struct ChangeHint: Sendable, Hashable {
    /// The writing transaction: the change is in the feed once the frontier has passed it.
    let xid: UInt64
    /// The changed table's oid; 0 for an access grant or revocation (any resource).
    let table: UInt32
    let target: Target

    enum Target: Sendable, Hashable {
        /// A member row of this scope row changed: whoever can read the scope row may care.
        case scope(table: UInt32, id: String)
        /// This user wrote the table (or, with table 0, gained or lost access).
        case user(String)
        /// Anyone following the table may care.
        case everyone
    }

    /// Parses a payload; nil for anything else (an older or newer server's
    /// form), which the listener treats as a wake for everyone. Split by
    /// bytes: hints are ASCII, and `Character` splitting cost more than the
    /// rest of a PATCH's hint path together (`bench/api/api.sh instructions`).
    init?(payload: String) { self.init(payload: payload[...]) }

    /// ``init(payload:)`` of a line of a batch.
    init?(payload: Substring) {
        let parts = Self.pieces(of: payload, at: UInt8(ascii: " "), atMost: 5, omittingEmpty: false)
        guard parts.count >= 3, let xid = UInt64(parts[0]), let table = UInt32(parts[1]) else { return nil }
        self.xid = xid
        self.table = table
        switch parts[2] {
        case "*" where parts.count == 3:
            target = .everyone
        case "u" where parts.count == 4 && !parts[3].isEmpty:
            target = .user(String(parts[3]))
        case "s" where parts.count == 5:
            guard let scope = UInt32(parts[3]), !parts[4].isEmpty else { return nil }
            target = .scope(table: scope, id: String(parts[4]))
        default:
            return nil
        }
    }

    /// The payload of this hint, as the notify trigger writes it (``init(payload:)`` reads it back).
    var line: String {
        let head = String(xid) + " " + String(table) + " "
        switch target {
        case .scope(let scope, let id): return head + "s " + String(scope) + " " + id
        case .user(let user): return head + "u " + user
        case .everyone: return head + "*"
        }
    }

    /// `text`'s non-empty lines, split by bytes (see ``init(payload:)``).
    static func lines(_ text: String) -> [Substring] {
        pieces(of: text[...], at: UInt8(ascii: "\n"), atMost: .max, omittingEmpty: true)
    }

    /// `text` split at each `separator` byte, into at most `limit` pieces (the last one
    /// the rest), without the empty ones when `omittingEmpty`. The bytes are scanned in
    /// their buffer, not by `Collection.split` (whose generic slices, each wrapped again
    /// as a `Substring`, cost a PATCH's writer ~25,000 instructions for its two hints)
    /// nor by the UTF-8 view's indices (~19,000: each step checks its bounds); then each
    /// piece is cut by offset (`BENCH_INSTRUCTIONS_OPS="patch patch-off" bash
    /// bench/api/api.sh instructions`, bench/feed/README.md).
    private static func pieces(of text: Substring, at separator: UInt8, atMost limit: Int, omittingEmpty: Bool) -> [Substring] {
        // On a copy: `withUTF8` makes a string's bytes contiguous where they are not.
        var contiguous = text
        let bounds = contiguous.withUTF8 { buffer -> [Range<Int>] in
            var bounds: [Range<Int>] = []
            var start = 0
            var offset = 0
            while offset < buffer.count, bounds.count < limit - 1 {
                if buffer[offset] == separator {
                    if !omittingEmpty || offset != start { bounds.append(start..<offset) }
                    start = offset + 1
                }
                offset += 1
            }
            if !omittingEmpty || start != buffer.count { bounds.append(start..<buffer.count) }
            return bounds
        }
        let bytes = text.utf8
        let base = bytes.startIndex
        return bounds.map { text[bytes.index(base, offsetBy: $0.lowerBound)..<bytes.index(base, offsetBy: $0.upperBound)] }
    }

    /// The hints of one notification on `ferry_changes`: a trigger's one hint
    /// (a write made outside Ferry, core 0017), or an instance's batch
    /// (``HintOutbox``: `@<instance>` and one hint a line), none when that
    /// instance is `own` (it woke its waiters itself). A line this server does
    /// not read still wakes whoever might care: everyone.
    static func hints(inPayload payload: String, own: String) -> [ChangeHint] {
        guard payload.hasPrefix("@") else { return [ChangeHint(payload: payload) ?? Self.everyone] }
        // Its own instance's batch is skipped before anything is split.
        let ownHead = "@" + own
        if payload == ownHead || payload.hasPrefix(ownHead + "\n") { return [] }
        return lines(payload).dropFirst().map { ChangeHint(payload: $0) ?? Self.everyone }
    }

    /// A wake for every waiter, whatever it follows.
    static let everyone = ChangeHint(xid: 0, table: 0, target: .everyone)

    init(xid: UInt64, table: UInt32, target: Target) {
        self.xid = xid
        self.table = table
        self.target = target
    }
}
