/// An ordered list of header fields, as they arrived or will be sent.
///
/// Names keep their original spelling but compare case-insensitively
/// (RFC 9110 §5.1). Repeated fields are kept as separate entries, in order,
/// so that a caller can tell `Content-Length: 5` twice from a list value.
public struct HTTPHeaders: Sendable, Equatable {
    /// The fields in wire order.
    public private(set) var fields: [(name: String, value: String)]

    /// An empty header list.
    public init() { fields = [] }

    /// A header list from `(name, value)` pairs, in order.
    public init(_ pairs: [(String, String)]) {
        fields = pairs.map { (name: $0.0, value: $0.1) }
    }

    /// Makes room for `count` fields, so adding that many allocates once.
    public mutating func reserveCapacity(_ count: Int) { fields.reserveCapacity(count) }

    /// The first value of the named field, or nil.
    public subscript(name: String) -> String? {
        for field in fields where Self.equalNames(field.name, name) { return field.value }
        return nil
    }

    /// Every value of the named field, in order.
    public func values(_ name: String) -> [String] {
        fields.compactMap { Self.equalNames($0.name, name) ? $0.value : nil }
    }

    /// Whether the named field occurs at all.
    public func contains(_ name: String) -> Bool { self[name] != nil }

    /// Appends a field, keeping any existing ones of the same name.
    public mutating func add(_ name: String, _ value: String) {
        fields.append((name: name, value: value))
    }

    /// Replaces every field of that name with one field.
    public mutating func replace(_ name: String, _ value: String) {
        remove(name)
        fields.append((name: name, value: value))
    }

    /// Removes every field of that name.
    public mutating func remove(_ name: String) {
        fields.removeAll { Self.equalNames($0.name, name) }
    }

    /// The number of fields.
    public var count: Int { fields.count }

    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.count == rhs.fields.count
            && zip(lhs.fields, rhs.fields).allSatisfy { equalNames($0.name, $1.name) && $0.value == $1.value }
    }

    /// ASCII case-insensitive comparison. Only letters are folded, so that
    /// no two distinct token characters (such as `^` and `~`) compare equal.
    @inlinable
    public static func equalNames(_ a: String, _ b: String) -> Bool {
        // Most comparisons in a header lookup fail on length, which costs nothing to read.
        guard a.utf8.count == b.utf8.count else { return false }
        var a = a, b = b
        return a.withUTF8 { ua in
            b.withUTF8 { ub in
                guard ua.count == ub.count else { return false }
                for i in 0..<ua.count where ua[i] != ub[i] {
                    let x = ua[i] | 0x20
                    guard x == ub[i] | 0x20, x >= 0x61, x <= 0x7a else { return false }
                }
                return true
            }
        }
    }
}
