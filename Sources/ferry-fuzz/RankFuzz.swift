import FerryRank

/// Rank keys: parsing (`Rank.validate`) and generation (`between`, `first`, `last`,
/// `spread`). The input is two candidate keys separated by the first `,`; its length
/// picks the spread count.
///
/// Properties:
/// - `validate` accepts exactly the keys of the documented grammar (1 to 128 of
///   `0-9A-Za-z`, not ending in `0`), and refuses everything else with an error;
/// - for valid `a < b`, `between(a, b)` is valid, strictly between them and at most one
///   character longer than the longer bound, and it never fails while both are shorter
///   than `maxLength`; the same for `first(before:)` and `last(after:)`;
/// - for `a >= b`, `between` fails;
/// - `spread` gives that many strictly increasing valid keys inside the bounds.
enum RankFuzz {
    static func run(_ input: UnsafeRawBufferPointer) {
        let parts = input.split(separator: UInt8(ascii: ","), maxSplits: 1, omittingEmptySubsequences: false)
        let a = String(decoding: parts[0], as: UTF8.self)
        let b = parts.count > 1 ? String(decoding: parts[1], as: UTF8.self) : nil
        let aValid = checkValidation(a)
        let bValid = b.map(checkValidation) ?? false

        if aValid { checkBetween(a, nil) }
        if let b, bValid {
            checkBetween(nil, b)
            if aValid { checkBetween(a, b) }
        }
        if aValid, b == nil || bValid {
            checkSpread(input.count % 24, a, b)
        }
    }

    /// Whether `key` is valid, after checking `validate` agrees with the grammar.
    static func checkValidation(_ key: String) -> Bool {
        let valid = isWellFormed(key)
        let accepted = (try? Rank.validate(key)) != nil
        require(accepted == valid, "validate \(accepted ? "accepted" : "refused") \(key.debugDescription)")
        return valid
    }

    /// The grammar, written out independently of FerryRank.
    static func isWellFormed(_ key: String) -> Bool {
        let bytes = Array(key.utf8)
        return (1...Rank.maxLength).contains(bytes.count) && bytes.last != UInt8(ascii: "0")
            && bytes.allSatisfy { Rank.alphabet.utf8.contains($0) }
    }

    static func precedes(_ a: String, _ b: String) -> Bool { Array(a.utf8).lexicographicallyPrecedes(Array(b.utf8)) }

    static func checkBetween(_ a: String?, _ b: String?) {
        let ordered = a == nil || b == nil || precedes(a!, b!)
        let longest = max(a?.utf8.count ?? 0, b?.utf8.count ?? 0)
        do {
            let key = try Rank.between(a, b)
            require(ordered, "between(\(a as Any), \(b as Any)) answered \(key) for misordered bounds")
            require(isWellFormed(key), "between gave the invalid key \(key.debugDescription)")
            require(a.map { precedes($0, key) } ?? true, "\(key) is not above \(a!)")
            require(b.map { precedes(key, $0) } ?? true, "\(key) is not below \(b!)")
            require(key.utf8.count <= max(longest, 1) + 1, "\(key) is more than one character longer than its bounds")
            if a == nil { require(try Rank.first(before: b) == key, "first(before:) differs from between(nil, b)") }
            if b == nil { require(try Rank.last(after: a) == key, "last(after:) differs from between(a, nil)") }
        } catch {
            require(!ordered || longest >= Rank.maxLength, "between(\(a as Any), \(b as Any)) failed: \(error)")
        }
    }

    static func checkSpread(_ count: Int, _ a: String, _ b: String?) {
        guard b.map({ precedes(a, $0) }) ?? true else {
            require((try? Rank.spread(count, between: a, and: b)) == nil, "spread between misordered bounds")
            return
        }
        guard let keys = try? Rank.spread(count, between: a, and: b) else {
            // Bisecting for n keys needs about log2(n) more characters than the bounds have.
            require(max(a.utf8.count, b?.utf8.count ?? 0) > Rank.maxLength - 8, "spread of \(count) failed")
            return
        }
        require(keys.count == count, "spread gave \(keys.count) keys for \(count)")
        var previous = a
        for key in keys {
            require(isWellFormed(key) && precedes(previous, key), "spread: \(key.debugDescription) after \(previous.debugDescription)")
            previous = key
        }
        if let b { require(precedes(previous, b), "spread: \(previous) not below \(b)") }
    }
}
