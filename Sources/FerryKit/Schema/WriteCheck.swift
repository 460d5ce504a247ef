/// Whether a write fits the resource as the server has it, before anything is
/// written: pure, so the rules are tested without a database, and a refused
/// write leaves the store and its outbox as they were.
///
/// The server would refuse the same writes (422), but only on upload, long
/// after the app could tell the person; these are the mistakes a program makes
/// (a misspelt column, a number for a text), found where they are made.
enum WriteCheck {
    /// A create's values: every column known and of its type; nothing the
    /// server owns; every column the server requires (not null, no default)
    /// set. A null counts as left out: the server's default fills it.
    static func create(_ values: RowData, _ resource: ServerSchema.Resource) throws {
        for (name, value) in values.sorted(by: { $0.key < $1.key }) {
            let column = try known(name, resource)
            guard value != .null else { continue }
            if name != "id", !column.writable || ServerSchema.Column.syncColumns.contains(name) {
                throw FerryKitError.readOnlyColumn(resource: resource.name, column: name)
            }
            try fits(value, column, resource)
        }
        for column in resource.columns where required(column) && (values[column.name] ?? .null) == .null {
            throw FerryKitError.missingValue(resource: resource.name, column: column.name)
        }
    }

    /// An update of the row now `current`: returns the columns it changes.
    /// A value equal to the current one is no change (a whole row may be
    /// echoed back); a change to a column the server owns, or to one set once
    /// at creation in a row the server already has, is refused.
    static func update(_ values: RowData, current: RowData, _ resource: ServerSchema.Resource) throws -> Set<String> {
        var changed = Set<String>()
        for (name, value) in values.sorted(by: { $0.key < $1.key }) {
            let column = try known(name, resource)
            guard (current[name] ?? .null) != value else { continue }
            let onServer = (current["revision"] ?? .null) != .null
            if ServerSchema.Column.syncColumns.contains(name) || !column.writable || (onServer && column.updatable == false) {
                throw FerryKitError.readOnlyColumn(resource: resource.name, column: name)
            }
            if value == .null, !column.nullable { throw FerryKitError.missingValue(resource: resource.name, column: name) }
            try fits(value, column, resource)
            changed.insert(name)
        }
        return changed
    }

    /// A column the server requires on create: not null, no default, and the
    /// client's to send (the id is made locally when left out).
    static func required(_ column: ServerSchema.Column) -> Bool {
        column.name != "id" && column.writable && !column.nullable && column.hasDefault != true
            && !ServerSchema.Column.syncColumns.contains(column.name)
    }

    static func known(_ name: String, _ resource: ServerSchema.Resource) throws -> ServerSchema.Column {
        guard let column = resource.column(name) else {
            throw FerryKitError.unknownColumn(resource: resource.name, column: name, known: resource.columns.map(\.name))
        }
        return column
    }

    static func fits(_ value: JSONValue, _ column: ServerSchema.Column, _ resource: ServerSchema.Resource) throws {
        guard ColumnType(column.valueType).accepts(value) else {
            throw FerryKitError.typeMismatch(resource: resource.name, column: column.name, expected: column.type, got: ColumnType.describe(value))
        }
    }
}

/// What JSON a PostgreSQL column takes, as the server checks it (Ferry's
/// `ValueKind`): FerryKit cannot share the server's code, only the contract.
enum ColumnType: Equatable {
    case text
    case uuid
    case integer(min: Int64, max: Int64)
    case number
    case boolean
    case array
    case any
    /// Anything PostgreSQL parses from text (timestamps, enums): a string, number or boolean.
    case scalar

    init(_ type: String) {
        switch type.lowercased() {
        // An array first: `character varying(8)[]` is an array, not text (as the server reads it).
        case let other where other.hasSuffix("[]"): self = .array
        case "text", "name", "citext": self = .text
        case let other where other.hasSuffix(".citext"): self = .text
        case let other where other.hasPrefix("character"): self = .text
        case "uuid": self = .uuid
        case "smallint": self = .integer(min: Int64(Int16.min), max: Int64(Int16.max))
        case "integer": self = .integer(min: Int64(Int32.min), max: Int64(Int32.max))
        case "bigint": self = .integer(min: .min, max: .max)
        case "real", "double precision": self = .number
        case let other where other.hasPrefix("numeric"): self = .number
        case "boolean": self = .boolean
        case "json", "jsonb": self = .any
        default: self = .scalar
        }
    }

    /// Whether `value` fits; null always does (nullability is checked apart).
    func accepts(_ value: JSONValue) -> Bool {
        if value == .null { return true }
        switch self {
        case .text: return value.string != nil
        case .uuid: return value.string.map(Self.isUUID) ?? false
        case .integer(let min, let max): return value.int.map { $0 >= min && $0 <= max } ?? false
        case .number: if case .double = value { return true } else { return value.int != nil }
        case .boolean: return value.bool != nil
        case .array: return value.array != nil
        case .any: return true
        case .scalar:
            switch value {
            case .string, .int, .double, .bool: return true
            default: return false
            }
        }
    }

    /// What was written, in words, for an error.
    static func describe(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool(let flag): "the boolean \(flag)"
        case .int(let number): "the integer \(number)"
        case .double(let number): "the number \(number)"
        case .string(let text): "the string \"\(text.count > 40 ? String(text.prefix(40)) + "…" : text)\""
        case .array: "an array"
        case .object: "an object"
        }
    }

    static func isUUID(_ text: String) -> Bool {
        let hex = text.utf8.filter { $0 != UInt8(ascii: "-") }
        return (text.utf8.count == 36 || text.utf8.count == 32) && hex.count == 32
            && hex.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 70) || ($0 >= 97 && $0 <= 102) }
    }
}
