import FerryHTTP

extension OpenAPIDocument {
    /// The JSON Schema of a column's JSON value, from PostgreSQL's type name
    /// (as `format_type` prints it); nullable columns also allow `null`.
    static func columnSchema(_ column: Column) -> JSONValue {
        var members = typeSchema(column.valueType)
        if column.nullable, let index = members.firstIndex(where: { $0.0 == "type" }), case .string(let type) = members[index].1 {
            members[index].1 = .array([.string(type), "null"])
        }
        members.append(("description", .string(description(column))))
        if !column.writable { members.append(("readOnly", true)) }
        return .object(members)
    }

    static func description(_ column: Column) -> String {
        var text = column.comment.map { $0.hasSuffix(".") ? $0 + " " : $0 + ". " } ?? ""
        text += "PostgreSQL type \(column.type)"
        if column.valueType != column.type { text += " (a domain over \(column.valueType))" }
        if let target = column.references { text += "; references \(target)" }
        if column.name == "last_modified" { text += "; milliseconds since the Unix epoch" }
        if column.hasDefault { text += "; has a default" }
        return text + "."
    }

    /// JSON Schema members for a PostgreSQL type. Types Ferry cannot say
    /// more about are left open (any JSON value) rather than guessed.
    static func typeSchema(_ pgType: String) -> [(String, JSONValue)] {
        let type = pgType.lowercased()
        if type.hasSuffix("[]") {
            return [("type", "array"), ("items", .object(typeSchema(String(pgType.dropLast(2)))))]
        }
        let base = type.split(separator: "(").first.map { String($0).trimmingSpaces } ?? type
        switch base {
        case "uuid": return [("type", "string"), ("format", "uuid")]
        case "smallint", "integer", "int", "int2", "int4": return [("type", "integer"), ("format", "int32")]
        case "bigint", "int8": return [("type", "integer"), ("format", "int64")]
        case "numeric", "decimal", "real", "double precision", "float4", "float8": return [("type", "number")]
        case "boolean", "bool": return [("type", "boolean")]
        case "date": return [("type", "string"), ("format", "date")]
        case "timestamp with time zone", "timestamp without time zone", "timestamptz", "timestamp":
            return [("type", "string"), ("format", "date-time")]
        case "json", "jsonb": return []
        case "character varying", "varchar", "character", "char":
            if let length = lengthModifier(type) { return [("type", "string"), ("maxLength", .int(length))] }
            return [("type", "string")]
        default:
            // text, citext, bytea (hex text), enums, domains: all arrive as JSON strings.
            return [("type", "string")]
        }
    }

    /// `n` in `character varying(n)`.
    static func lengthModifier(_ type: String) -> Int? {
        guard let open = type.firstIndex(of: "("), let close = type.firstIndex(of: ")"), open < close else { return nil }
        return Int(type[type.index(after: open)..<close])
    }
}

extension String {
    var trimmingSpaces: String {
        var s = Substring(self)
        while s.first == " " { s.removeFirst() }
        while s.last == " " { s.removeLast() }
        return String(s)
    }
}
