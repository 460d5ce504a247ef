import Foundation

/// A record type's properties (their coding keys), what Swift type each asks
/// for, and whether it is optional, read from the type's `Decodable`
/// conformance without a value: the type decodes itself from a probe that
/// answers every question with a placeholder and notes what was asked.
///
/// So a record whose property is no column, or has the wrong type, is refused
/// on first use, before any row is read or written. A property of a type the
/// probe cannot make a placeholder for (an enum whose raw values exclude it)
/// stops the probe there: the properties after it are then checked when rows
/// are read and written.
struct RecordShape: Sendable, Equatable {
    struct Field: Sendable, Equatable {
        let key: String
        let kind: SwiftKind
        let optional: Bool
    }

    /// The kinds of Swift value the check can compare with a column's type.
    enum SwiftKind: Sendable, Equatable {
        case text, integer, number, boolean, array, json, date, other
    }

    var fields: [Field] = []
    /// Every property was read.
    var complete = true

    static func of<T: Decodable>(_ type: T.Type) -> RecordShape {
        let probe = ShapeProbe()
        do {
            _ = try T(from: ShapeDecoder(probe: probe, topLevel: true))
        } catch {
            probe.shape.complete = false
        }
        return probe.shape
    }

    static func kind(of type: Any.Type) -> SwiftKind {
        switch type {
        case is String.Type, is any FerryRecordID.Type, is UUID.Type, is URL.Type: .text
        case is Bool.Type: .boolean
        case is any BinaryInteger.Type: .integer
        case is any BinaryFloatingPoint.Type, is Decimal.Type: .number
        case is JSONValue.Type: .json
        case is Date.Type: .date
        case is any ArrayShape.Type: .array
        default: .other
        }
    }

    /// Whether a property of `kind` holds what a column of `type` holds.
    static func fits(_ kind: SwiftKind, _ type: ColumnType) -> Bool {
        switch (kind, type) {
        case (.other, _), (.json, _), (_, .any): true
        case (.text, .text), (.text, .uuid), (.text, .scalar): true
        case (.integer, .integer), (.integer, .number), (.integer, .scalar): true
        case (.number, .number), (.number, .scalar): true
        case (.boolean, .boolean), (.boolean, .scalar): true
        case (.array, .array): true
        case (.date, .scalar), (.date, .text): true
        default: false
        }
    }

    static func describe(_ kind: SwiftKind) -> String {
        switch kind {
        case .text: "text (String)"
        case .integer: "an integer"
        case .number: "a floating-point number"
        case .boolean: "a Bool"
        case .array: "an array"
        case .json: "JSON"
        case .date: "a Date"
        case .other: "a custom type"
        }
    }
}

/// Arrays, told apart from other generic types.
protocol ArrayShape {}
extension Array: ArrayShape {}

/// What the probe has seen so far.
final class ShapeProbe {
    var shape = RecordShape()
    /// Depth below the record's own keys (nested values are not columns).
    var depth = 0
}

/// The probe's placeholder for anything it is asked to decode: a zero UUID as
/// text (which also makes an id, a URL or a plain string), zero, false.
struct ShapeDecoder: Decoder {
    let probe: ShapeProbe
    let topLevel: Bool
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] = [:]

    static let placeholderText = "00000000-0000-0000-0000-000000000000"

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(ShapeKeyedContainer<Key>(probe: probe, records: topLevel))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { EmptyUnkeyed() }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { ShapeValue(probe: probe) }
}

struct ShapeKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let probe: ShapeProbe
    /// The record's own keyed container, whose keys are columns.
    let records: Bool
    var codingPath: [any CodingKey] = []
    var allKeys: [Key] { [] }

    func contains(_ key: Key) -> Bool { true }

    func note(_ key: Key, _ type: Any.Type, optional: Bool) {
        guard records else { return }
        if let index = probe.shape.fields.firstIndex(where: { $0.key == key.stringValue }) {
            // A key asked twice (decodeNil, then decode): keep what each told.
            let kind = RecordShape.kind(of: type)
            probe.shape.fields[index] = .init(
                key: key.stringValue, kind: kind == .other ? probe.shape.fields[index].kind : kind,
                optional: probe.shape.fields[index].optional || optional)
        } else {
            probe.shape.fields.append(.init(key: key.stringValue, kind: RecordShape.kind(of: type), optional: optional))
        }
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        note(key, Any.self, optional: true)
        return false
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        note(key, type, optional: false)
        return try ShapeValue.placeholder(type, probe: probe)
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        note(key, type, optional: true)
        return try ShapeValue.placeholder(type, probe: probe)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        note(key, Any.self, optional: false)
        return KeyedDecodingContainer(ShapeKeyedContainer<NestedKey>(probe: probe, records: false))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        note(key, [Any].self, optional: false)
        return EmptyUnkeyed()
    }

    func superDecoder() throws -> any Decoder { ShapeDecoder(probe: probe, topLevel: false) }
    func superDecoder(forKey key: Key) throws -> any Decoder { ShapeDecoder(probe: probe, topLevel: false) }
}

struct ShapeValue: SingleValueDecodingContainer {
    let probe: ShapeProbe
    var codingPath: [any CodingKey] = []

    func decodeNil() -> Bool { false }

    func decode<T: Decodable>(_ type: T.Type) throws -> T { try Self.placeholder(type, probe: probe) }

    /// A value of `type`: the probe's constant for the standard types, else
    /// the type decoded from placeholders itself.
    static func placeholder<T: Decodable>(_ type: T.Type, probe: ShapeProbe) throws -> T {
        // By exact type: `as?` between numbers and Bool may bridge through NSNumber.
        switch type {
        case is String.Type: return ShapeDecoder.placeholderText as! T
        case is Bool.Type: return false as! T
        case is Int.Type: return 0 as! T
        case is Int64.Type: return Int64(0) as! T
        case is Int32.Type: return Int32(0) as! T
        case is Int16.Type: return Int16(0) as! T
        case is Int8.Type: return Int8(0) as! T
        case is UInt.Type: return UInt(0) as! T
        case is UInt64.Type: return UInt64(0) as! T
        case is UInt32.Type: return UInt32(0) as! T
        case is UInt16.Type: return UInt16(0) as! T
        case is UInt8.Type: return UInt8(0) as! T
        case is Double.Type: return 0.0 as! T
        case is Float.Type: return Float(0) as! T
        default: return try T(from: ShapeDecoder(probe: probe, topLevel: false))
        }
    }
}

struct EmptyUnkeyed: UnkeyedDecodingContainer {
    var codingPath: [any CodingKey] = []
    var count: Int? { 0 }
    var isAtEnd: Bool { true }
    var currentIndex: Int { 0 }

    struct End: Error {}

    mutating func decodeNil() throws -> Bool { throw End() }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { throw End() }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> { throw End() }
    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { throw End() }
    mutating func superDecoder() throws -> any Decoder { throw End() }
}
