// FerryRank: fractional-index keys for rows kept in a user-defined order.
//
// Alphabet: the 62 ASCII characters `0-9A-Za-z`, in ASCII order. Each character is a
// base-62 digit ("0" = 0 ... "z" = 61), so a key `d1 d2 ... dn` stands for the fraction
// 0.d1d2...dn. Because the digits are in ASCII order, comparing two keys bytewise (what
// PostgreSQL does under `COLLATE "C"`, and what `Array(a.utf8).lexicographicallyPrecedes(...)`
// does in Swift) is the same as comparing their fractions.
//
// Guarantees:
// - Every generated key is valid (see `Rank.validate`) and lies strictly between its bounds.
// - `Rank.between(a, b)` succeeds for any valid `a < b` that are both shorter than
//   `Rank.maxLength`. The result is the shortest key in the gap, so it is at most one
//   character longer than the longer bound, and keys only grow where the gap is exhausted.
// - Repeated inserts at one spot (after a fixed key, before a fixed key, at the front, at
//   the end) grow keys by about one character per 61 inserts, not per 6 as a plain
//   midpoint would.
// - Pure Swift, no Foundation, no shared state: safe to call from any thread.

/// Fractional-index keys ("ranks") that order rows within a parent.
///
/// Rows are ordered by `(rank, id)`. To insert a row between two neighbours, or to move a
/// row there, give it `try Rank.between(left, right)`; no other row has to change.
///
/// A valid key is non-empty, at most ``maxLength`` characters from ``alphabet``, and does
/// not end in `"0"`, the smallest digit. The last rule is what makes generation total:
/// a key ending in `"0"` names the same fraction as the key without that zero
/// (`"V0"` = `"V"` = 0.V), yet sorts after it, so nothing could be generated between the two;
/// and `"0"`, `"00"`, ... would be the fraction zero, below which no key exists at all. With
/// the rule, between any two valid keys `a < b` there is always a further valid key.
public enum Rank {
    /// The digits of a key, smallest first: `0-9A-Za-z`. Their ASCII order is their
    /// numeric order, so bytewise comparison orders keys correctly.
    public static let alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

    /// The longest key accepted or produced, in characters.
    public static let maxLength = 128

    /// The most keys a single ``spread(_:between:and:)`` call produces; bounds the work a
    /// request can cause.
    public static let maxSpreadCount = 100_000

    /// Checks that `key` is a well-formed rank: non-empty, at most ``maxLength`` characters,
    /// only characters from ``alphabet``, and not ending in `"0"`.
    ///
    /// - Throws: ``RankError`` whose ``RankError/reason`` says what is wrong.
    public static func validate(_ key: String) throws(RankError) {
        _ = try digits(of: key)
    }

    /// Returns a key strictly between `a` and `b`.
    ///
    /// `nil` for `a` means "before everything", `nil` for `b` means "after everything";
    /// `between(nil, nil)` is the first key of an empty list (`"V"`). When one neighbour
    /// is longer than the other it is taken to be the recently generated one, and the new
    /// key is placed next to it, leaving the wide part of the gap for the next insert at
    /// the same spot.
    ///
    /// The result is a shortest key in the gap: at most one character longer than the
    /// longer of `a` and `b`.
    ///
    /// - Throws: ``RankError`` if `a` or `b` is invalid, if `a >= b`, or if no key of at
    ///   most ``maxLength`` characters fits (only possible when `a` or `b` is already
    ///   ``maxLength`` long).
    public static func between(_ a: String?, _ b: String?) throws(RankError) -> String {
        let (lower, upper) = try bounds(a, b)
        let bias: Bias
        switch (lower.count, upper?.count ?? 0) {
        case let (l, u) where l > u: bias = .lower
        case let (l, u) where l < u: bias = .upper
        default: bias = .middle
        }
        return try key(from: generate(above: lower, below: upper, bias: bias))
    }

    /// A key before `first`, the current first key; `nil` when the list is empty.
    public static func first(before first: String?) throws(RankError) -> String {
        try between(nil, first)
    }

    /// A key after `last`, the current last key; `nil` when the list is empty.
    public static func last(after last: String?) throws(RankError) -> String {
        try between(last, nil)
    }

    /// Returns `n` strictly increasing keys, all strictly between `a` and `b` and spread
    /// evenly across the gap (by repeated halving), for bulk inserts and initial seeding.
    ///
    /// - Throws: ``RankError`` for invalid or misordered bounds, for `n` outside
    ///   `0...maxSpreadCount`, or if the keys would exceed ``maxLength``.
    public static func spread(_ n: Int, between a: String?, and b: String?) throws(RankError) -> [String] {
        guard (0...maxSpreadCount).contains(n) else {
            throw RankError(reason: "spread count must be between 0 and \(maxSpreadCount), got \(n)")
        }
        let (lower, upper) = try bounds(a, b)
        var out: [[UInt8]] = []
        fill(&out, count: n, above: lower, below: upper)
        var keys: [String] = []
        for digits in out { keys.append(try key(from: digits)) }
        return keys
    }

    /// Parses and orders the bounds; an absent lower bound is the empty digit string (zero).
    private static func bounds(_ a: String?, _ b: String?) throws(RankError) -> ([UInt8], [UInt8]?) {
        var lower: [UInt8] = []
        var upper: [UInt8]? = nil
        if let a { lower = try digits(of: a) }
        if let b { upper = try digits(of: b) }
        if a != nil, let upper, !lower.lexicographicallyPrecedes(upper) {
            throw RankError(reason: "the lower rank must sort strictly before the upper rank")
        }
        return (lower, upper)
    }

    /// Bisects the gap so the keys are spread evenly and stay short.
    private static func fill(_ out: inout [[UInt8]], count: Int, above a: [UInt8], below b: [UInt8]?) {
        guard count > 0 else { return }
        let mid = generate(above: a, below: b, bias: .middle)
        let left = (count - 1) / 2
        fill(&out, count: left, above: a, below: mid)
        out.append(mid)
        fill(&out, count: count - 1 - left, above: mid, below: b)
    }
}
