/// An `Accept-Encoding` field value (RFC 9110 §12.5.3), reduced to the choice
/// between the codings the server can produce.
struct AcceptEncoding {
    /// The qvalue of each coding the field names (in thousandths); `*` under `star`.
    private var weights: [String: Int] = [:]
    private var star: Int?

    /// Parses a list like `gzip;q=1.0, identity; q=0.5, *;q=0`; malformed members are skipped.
    init(_ value: String) {
        for member in value.split(separator: ",") {
            let parts = member.split(separator: ";")
            guard let name = parts.first?.trimmingASCIISpaces.lowercased(), !name.isEmpty else { continue }
            var weight = 1000
            for parameter in parts.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1)
                guard pair.count == 2, pair[0].trimmingASCIISpaces.lowercased() == "q" else { continue }
                weight = Self.qvalue(pair[1].trimmingASCIISpaces) ?? 0
            }
            if name == "*" { star = weight } else { weights[name] = max(weights[name] ?? 0, weight) }
        }
    }

    /// The coding to answer in: the acceptable one with the highest qvalue, gzip before deflate
    /// on a tie. Identity, unless named or covered by `*`, ranks below any acceptable coding.
    ///
    /// When every coding is refused, identity included (`identity;q=0` or `*;q=0`), the answer is
    /// identity anyway rather than 406: RFC 9110 §12.1 lets a server disregard the field, and a
    /// client that cannot read identity JSON has no use for a problem it cannot read either.
    func preferred() -> ContentCoding {
        var best: ContentCoding = .identity
        var bestWeight = 0
        for coding in [ContentCoding.gzip, .deflate] {
            let weight = weights[coding.rawValue] ?? (coding == .gzip ? weights["x-gzip"] : nil) ?? star ?? 0
            if weight > bestWeight {
                best = coding
                bestWeight = weight
            }
        }
        if let identity = weights["identity"] ?? star, identity > bestWeight { return .identity }
        return best
    }

    /// `0`, `0.5`, `1.000` as thousandths; nil when it is not a qvalue.
    private static func qvalue(_ text: Substring) -> Int? {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, whole == "0" || whole == "1" else { return nil }
        var fraction = parts.count == 2 ? String(parts[1]) : ""
        guard fraction.count <= 3, fraction.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        fraction += String(repeating: "0", count: 3 - fraction.count)
        let value = (whole == "1" ? 1000 : 0) + (Int(fraction) ?? 0)
        return value > 1000 ? nil : value
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs (OWS).
    var trimmingASCIISpaces: Substring {
        var text = self
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }
}
