import Foundation

/// A JSON value as FerryKit stores, merges and sends it.
///
/// Rows travel as objects of these. Integers are kept apart from other numbers,
/// so that a revision or an id read back from SQLite compares equal to the one
/// the server sent.
public enum JSONValue: Sendable, Hashable, Codable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null; return }
        if let value = try? container.decode(Bool.self) { self = .bool(value); return }
        if let value = try? container.decode(Int64.self) { self = .int(value); return }
        if let value = try? container.decode(Double.self) { self = .double(value); return }
        if let value = try? container.decode(String.self) { self = .string(value); return }
        if let value = try? container.decode([JSONValue].self) { self = .array(value); return }
        self = .object(try container.decode([String: JSONValue].self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The string, for `.string`.
    public var string: String? { if case .string(let value) = self { value } else { nil } }
    /// The integer, for `.int` (and a `.double` that is a whole number).
    public var int: Int64? {
        switch self {
        case .int(let value): value
        case .double(let value) where value.rounded() == value: Int64(exactly: value)
        default: nil
        }
    }
    /// The flag, for `.bool`.
    public var bool: Bool? { if case .bool(let value) = self { value } else { nil } }
    /// The members, for `.object`.
    public var object: [String: JSONValue]? { if case .object(let value) = self { value } else { nil } }

    /// Compact JSON bytes, keys sorted (stable, so equal values encode equally).
    public func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)) ?? Data("null".utf8)
    }

    /// Parses JSON bytes.
    public static func decode(_ data: Data) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: data)
    }
}

/// A row's fields: column name to value.
public typealias RowData = [String: JSONValue]
