extension Rank {
    /// Which end of a gap a new digit is taken from.
    ///
    /// Next to the recently generated neighbour is right for runs of inserts at one spot:
    /// the next insert lands in the same, still wide, remainder of the gap (about 61
    /// inserts per extra character). The middle is the safe choice when there is no hint.
    enum Bias {
        case lower, upper, middle
    }

    /// The shortest digit string strictly between `a` and `b` (`b == nil`: below 1), with
    /// its last digit chosen by `bias`. Never ends in 0.
    ///
    /// Requires `a < b` as digit strings, neither ending in 0 (`a` may be empty, meaning
    /// zero). The result has at most `max(a.count, b.count) + 1` digits.
    static func generate(above a: [UInt8], below b: [UInt8]?, bias: Bias) -> [UInt8] {
        // `a` padded with zeros: a key and the key plus trailing zeros are the same fraction.
        func digitA(_ i: Int) -> UInt8 { i < a.count ? a[i] : 0 }

        var out: [UInt8] = []
        var i = 0
        if let b {
            // Terminates inside `b`: were `b` a prefix of padded `a`, then `b <= a`.
            while digitA(i) == b[i] {
                out.append(b[i])
                i += 1
            }
        }
        let low = digitA(i)
        let high = b?[i] ?? base
        if high - low >= 2 {
            out.append(pick(above: low, below: high, bias: bias))
            return out
        }
        if let b, b.count > i + 1 {
            // `b` cut after this digit is already below `b` and above `a`.
            out.append(high)
            return out
        }
        // No digit fits here and the upper bound ends at this digit: keep `a`'s digit and
        // find anything above `a`'s tail, with no upper bound below 1.
        out.append(low)
        i += 1
        while digitA(i) == base - 1 {
            out.append(base - 1)
            i += 1
        }
        out.append(pick(above: digitA(i), below: base, bias: bias))
        return out
    }

    /// A digit strictly between `low` and `high`, which differ by at least 2; never 0.
    private static func pick(above low: UInt8, below high: UInt8, bias: Bias) -> UInt8 {
        switch bias {
        case .lower: low + 1
        case .upper: high - 1
        case .middle: UInt8((Int(low) + Int(high)) / 2)
        }
    }
}
