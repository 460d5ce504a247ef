/// The `:name` values a route pattern captured, in pattern order.
public struct RouteParameters: Sendable, Equatable {
    public private(set) var pairs: [(name: String, value: String)]

    public init() { pairs = [] }

    public init(_ pairs: [(String, String)]) { self.pairs = pairs.map { (name: $0.0, value: $0.1) } }

    /// The value captured for `name`; nil when the pattern has no `:name`.
    public subscript(name: String) -> String? {
        pairs.first { $0.name == name }?.value
    }

    mutating func append(_ name: String, _ value: String) { pairs.append((name: name, value: value)) }
    mutating func reserveCapacity(_ count: Int) { pairs.reserveCapacity(count) }
    mutating func removeLast() { pairs.removeLast() }

    public static func == (lhs: RouteParameters, rhs: RouteParameters) -> Bool {
        lhs.pairs.count == rhs.pairs.count && zip(lhs.pairs, rhs.pairs).allSatisfy { $0 == $1 }
    }
}
