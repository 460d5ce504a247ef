import Ferry

/// `FieldPrecheck` must never pass a PATCH or PUT body that `FieldValidation` (SQL,
/// run by PostgreSQL) would fail: a pass lets the fast update path leave the per-field
/// check out. Without PostgreSQL, the oracle is `FieldValidation`'s rules applied to
/// the body as JSONDecoder reads it, asserting only failures it is sure of.
enum FieldPrecheckCheck {
    static func check(_ members: ObjectMembers, in bytes: [UInt8]) {
        let resource = FuzzCatalog.terms
        guard FieldPrecheck(resource: resource, mode: .patch).passes(members, in: bytes) else { return }
        require(FieldPrecheck(resource: resource, mode: .put).passes(members, in: bytes), "PATCH passed and PUT did not")
        guard case .object(let fields)? = DecodedJSON.decode(bytes) else { return }
        for (name, value) in fields {
            guard let column = resource.column(name) else { return require(false, "passed the unknown field \(name.debugDescription)") }
            require(!surelyFails(column, value), "passed \(name) = \(value) for a \(column.type) column")
        }
    }

    /// Whether FieldValidation in PATCH or PUT mode certainly gives this field a reason.
    static func surelyFails(_ column: Column, _ value: DecodedJSON) -> Bool {
        switch column.name {
        case "id", "last_modified", "is_deleted":
            return false
        case "revision":
            return !isInteger(value, in: 0...Int64.max)
        default:
            break
        }
        if case .null = value { return !column.nullable }
        switch (column.type, value) {
        case ("uuid", .string(let text)): return !isUUID(text)
        case ("uuid", _): return true
        case ("text", .string): return false
        case ("text", _): return true
        case ("bigint", _): return !isInteger(value, in: Int64.min...Int64.max)
        case ("integer", _): return !isInteger(value, in: Int64(Int32.min)...Int64(Int32.max))
        case ("boolean", .boolean): return false
        case ("boolean", _): return true
        case (let type, .array) where type.hasSuffix("[]"): return false
        case (let type, _) where type.hasSuffix("[]"): return true
        case ("json", _): return false
        default: return false
        }
    }

    /// False only when the value is certainly not an integer in `range`; a non-integral-looking
    /// number such as `1.0` is left alone (PostgreSQL's `n = trunc(n)` takes it).
    static func isInteger(_ value: DecodedJSON, in range: ClosedRange<Int64>) -> Bool {
        switch value {
        case .integer(let n): range.contains(n)
        case .number: true
        default: false
        }
    }

    /// PostgreSQL's pattern: 32 hex digits, a hyphen allowed (each on its own) after the
    /// 8th, 12th, 16th and 20th.
    static func isUUID(_ text: String) -> Bool {
        var digits = 0
        var previousWasHyphen = false
        for byte in text.utf8 {
            if byte == UInt8(ascii: "-") {
                guard [8, 12, 16, 20].contains(digits), !previousWasHyphen else { return false }
                previousWasHyphen = true
                continue
            }
            guard byte < 0x80, Character(Unicode.Scalar(byte)).isHexDigit else { return false }
            digits += 1
            previousWasHyphen = false
        }
        return digits == 32 && !previousWasHyphen
    }
}
