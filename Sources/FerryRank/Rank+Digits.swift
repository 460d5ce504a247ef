extension Rank {
    /// Number of digits in ``alphabet``.
    static let base: UInt8 = 62

    /// Digit value → ASCII byte.
    private static let alphabetBytes: [UInt8] = Array(alphabet.utf8)

    /// Converts a key to base-62 digit values, enforcing every rule of ``validate(_:)``.
    static func digits(of key: String) throws(RankError) -> [UInt8] {
        let bytes = key.utf8
        guard !bytes.isEmpty else { throw RankError(reason: "rank must not be empty") }
        guard bytes.count <= maxLength else {
            throw RankError(reason: "rank must be at most \(maxLength) characters long")
        }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        for (offset, byte) in bytes.enumerated() {
            guard let digit = digit(ofByte: byte) else {
                throw RankError(reason: "rank may only contain 0-9, A-Z and a-z (bad character at byte \(offset))")
            }
            out.append(digit)
        }
        guard out.last != 0 else {
            throw RankError(reason: "rank must not end in \"0\" (it would leave no room before it)")
        }
        return out
    }

    /// Turns generated digits back into a key, refusing results that are too long.
    static func key(from digits: [UInt8]) throws(RankError) -> String {
        guard digits.count <= maxLength else {
            throw RankError(reason: "no rank of at most \(maxLength) characters fits between these neighbours")
        }
        return String(decoding: digits.map { alphabetBytes[Int($0)] }, as: UTF8.self)
    }

    private static func digit(ofByte byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "z"): byte - UInt8(ascii: "a") + 36
        default: nil
        }
    }
}
