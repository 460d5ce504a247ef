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
    /// The elements, for `.array`.
    public var array: [JSONValue]? { if case .array(let value) = self { value } else { nil } }

    /// Compact JSON bytes, keys sorted (stable, so equal values encode equally).
    /// Through `JSONSerialization`: `JSONEncoder` was the larger cost of keeping
    /// each row's base during a sync.
    public func encoded() -> Data {
        (try? JSONSerialization.data(withJSONObject: any, options: [.sortedKeys, .withoutEscapingSlashes, .fragmentsAllowed]))
            ?? Data("null".utf8)
    }

    /// The value as `JSONSerialization` takes it.
    var any: Any {
        switch self {
        case .null: NSNull()
        case .bool(let flag): flag
        case .int(let number): number
        case .double(let number): number
        case .string(let text): text
        case .array(let values): values.map(\.any)
        case .object(let members): members.mapValues(\.any)
        }
    }

    /// Parses JSON bytes.
    ///
    /// Through `JSONSerialization`, not `Decodable`: decoding an unknown value
    /// with `Decodable` means trying each type in turn and catching the errors,
    /// and a thrown error is costly (more so under a test runner that records a
    /// backtrace for each). An initial sync parses every row this way.
    public static func decode(_ data: Data) throws -> JSONValue {
        JSONValue(any: try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]))
    }

    /// The value `JSONSerialization` returned.
    ///
    /// The value's own type is looked at first, and objects and arrays are
    /// tried before `NSNumber`: casting a Swift dictionary or array to
    /// `NSNumber` (a class) bridges the whole of it to Foundation's (every
    /// member boxed) before the cast fails. With `NSNumber` tried first, a
    /// page's top object was bridged once, each change again and each row
    /// again: most of the CPU of parsing a page (bench/public-sets/README.md, stop 16).
    init(any value: Any) {
        let type = ObjectIdentifier(Swift.type(of: value))
        if type == ObjectIdentifier(String.self) {
            self = .string(value as! String)
            return
        }
        if type == ObjectIdentifier([String: Any].self) {
            self = .object((value as! [String: Any]).mapValues(JSONValue.init(any:)))
            return
        }
        if type == ObjectIdentifier([Any].self) {
            self = .array((value as! [Any]).map(JSONValue.init(any:)))
            return
        }
        switch value {
        case let object as [String: Any]:
            self = .object(object.mapValues(JSONValue.init(any:)))
        case let array as [Any]:
            self = .array(array.map(JSONValue.init(any:)))
        case let text as String:
            self = .string(text)
        case let number as NSNumber:
            // JSON true and false come back as NSNumbers of type char; integers as
            // integer types; everything else as a double.
            switch String(cString: number.objCType) {
            case "c", "B": self = .bool(number.boolValue)
            case "d", "f":
                self =
                    number.doubleValue.rounded() == number.doubleValue && abs(number.doubleValue) < 9e15
                    ? .int(Int64(number.doubleValue)) : .double(number.doubleValue)
            default: self = .int(number.int64Value)
            }
        default:
            self = .null
        }
    }
}

/// A row's fields: column name to value.
public typealias RowData = [String: JSONValue]
