import FerryRank

// `package`, not internal: ferry-fuzz feeds it client bytes directly (bench/fuzz/README.md).
/// A byte-level pass over a write body that settles the common case without
/// decoding JSON: every `"rank": "<key>"` holds a valid literal key (or there
/// is none). Anything it cannot settle (a computed form, an invalid key, an
/// escape, a non-string value) asks for the full parse.
package enum RankScan: Equatable {
    /// No `"rank"` key anywhere.
    case none
    /// Every `"rank"` key holds a valid literal key.
    case valid
    /// Decode the body and look properly.
    case needsParse

    package init(_ body: [UInt8]) {
        let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
        let name = Array("rank".utf8)
        var found = false
        var i = 0
        let n = body.count
        func skipSpace(_ j: inout Int) {
            while j < n, body[j] == 0x20 || body[j] == 0x09 || body[j] == 0x0A || body[j] == 0x0D { j += 1 }
        }
        while i < n {
            let byte = body[i]
            // `\u0072ank` would spell the key without the bytes: escapes go the long way.
            if byte == backslash, i + 1 < n, body[i + 1] == UInt8(ascii: "u") { self = .needsParse; return }
            guard byte == quote, i + 5 < n, body[i + 5] == quote, body[(i + 1)..<(i + 5)].elementsEqual(name) else {
                i += 1
                continue
            }
            var j = i + 6
            skipSpace(&j)
            guard j < n, body[j] == UInt8(ascii: ":") else { i += 6; continue } // the word "rank" as a value
            j += 1
            skipSpace(&j)
            guard j < n, body[j] == quote else { self = .needsParse; return }
            var k = j + 1
            while k < n, body[k] != quote {
                if body[k] == backslash { self = .needsParse; return }
                k += 1
            }
            guard k < n else { self = .needsParse; return }
            let key = String(decoding: body[(j + 1)..<k], as: UTF8.self)
            guard key != "first", key != "last", (try? Rank.validate(key)) != nil else { self = .needsParse; return }
            found = true
            i = k + 1
        }
        self = found ? .valid : .none
    }
}
