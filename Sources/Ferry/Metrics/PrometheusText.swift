/// A writer for the Prometheus text exposition format, version 0.0.4.
///
/// Small on purpose: Ferry exposes a fixed set of families, so a builder that
/// gets escaping and histogram shape right is all it needs (swift-prometheus
/// would add a dependency tree for the same output).
///
/// ```swift
/// var text = PrometheusText()
/// text.family("ferry_up", type: .gauge, help: "Always 1.")
/// text.sample("ferry_up", value: 1)
/// let body = text.output
/// ```
public struct PrometheusText: Sendable {
    /// A metric family's type, as the `# TYPE` line names it.
    public enum MetricType: String, Sendable {
        /// A value that only goes up (resets on restart).
        case counter
        /// A value that goes up and down.
        case gauge
        /// Cumulative buckets plus `_sum` and `_count`.
        case histogram
    }

    /// The content type Prometheus expects for this format.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// The text so far.
    public private(set) var output = ""

    public init() {}

    /// Starts a family with its `# HELP` and `# TYPE` lines.
    public mutating func family(_ name: String, type: MetricType, help: String) {
        output += "# HELP \(name) \(Self.escapeHelp(help))\n# TYPE \(name) \(type.rawValue)\n"
    }

    /// One sample line: `name{labels} value`.
    public mutating func sample(_ name: String, labels: [(String, String)] = [], value: Double) {
        output += name
        if !labels.isEmpty {
            output += "{"
            output += labels.map { "\($0.0)=\"\(Self.escapeLabel($0.1))\"" }.joined(separator: ",")
            output += "}"
        }
        output += " \(Self.format(value))\n"
    }

    /// One sample line with an integer value.
    public mutating func sample(_ name: String, labels: [(String, String)] = [], value: Int) {
        sample(name, labels: labels, value: Double(value))
    }

    /// A histogram's lines: cumulative `_bucket`s ending with `+Inf`, then `_sum` and `_count`.
    /// `counts[i]` is the number of observations in bucket `i` alone (not cumulative);
    /// it has one more entry than `bounds`, for observations above the last bound.
    public mutating func histogram(
        _ name: String, labels: [(String, String)], bounds: [Double], counts: [Int], sum: Double
    ) {
        var cumulative = 0
        for (index, bound) in bounds.enumerated() {
            cumulative += counts[index]
            sample(name + "_bucket", labels: labels + [("le", Self.format(bound))], value: cumulative)
        }
        cumulative += counts[bounds.count]
        sample(name + "_bucket", labels: labels + [("le", "+Inf")], value: cumulative)
        sample(name + "_sum", labels: labels, value: sum)
        sample(name + "_count", labels: labels, value: cumulative)
    }

    /// Label values escape backslash, double quote and line feed.
    static func escapeLabel(_ value: String) -> String {
        guard value.contains(where: { $0 == "\\" || $0 == "\"" || $0 == "\n" }) else { return value }
        var out = ""
        for char in value {
            switch char {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(char)
            }
        }
        return out
    }

    /// Help text escapes backslash and line feed only.
    static func escapeHelp(_ value: String) -> String {
        var out = ""
        for char in value {
            switch char {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default: out.append(char)
            }
        }
        return out
    }

    /// Integers print without a fraction; infinities and NaN as the format spells them.
    static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }
}
