/// Whether every field of a single PATCH or PUT body certainly passes
/// ``FieldValidation``: then ``FastUpdatePlan`` can leave the per-field check
/// out of its statement.
///
/// Why: in PostgreSQL that check is one expression over every column, built
/// and run for each statement; counted by callgrind on one backend it was
/// ~97,000 of the ~741,000 instructions of a fast-path PATCH of app.terms.
/// Here it is a walk over a few bytes.
///
/// It must never pass a body FieldValidation would fail (that would write
/// what should have been a 422), so it answers true only when sure and false
/// otherwise; false just means PostgreSQL checks, as before. It is stricter
/// than FieldValidation where being exact would take a JSON decoder: an
/// integer must be written as plain digits (`1.0` and `1e2` are left to
/// PostgreSQL), a uuid must not be escaped, and a key given twice must be
/// valid both times (jsonb keeps the last).
struct FieldPrecheck {
    let resource: Resource
    /// `.patch` or `.put` (the path names the row, so `id` in the body is ignored).
    let mode: WriteMode

    /// Whether every member of `members` (read from `bytes`) certainly passes.
    func passes(_ members: ObjectMembers, in bytes: [UInt8]) -> Bool {
        guard mode == .patch || mode == .put else { return false }
        for member in members.members {
            guard let column = column(named: bytes[member.key]) else { return false }
            switch column.name {
            case "id", "last_modified", "is_deleted":
                continue
            case "revision":
                guard Self.fits(member.value, .integer(min: 0, max: Int64.max), in: bytes) else { return false }
            default:
                if member.value == .null {
                    guard column.nullable else { return false }
                    continue
                }
                guard Self.fits(member.value, ValueKind(type: column.type), in: bytes) else { return false }
            }
        }
        return true
    }

    private func column(named key: ArraySlice<UInt8>) -> Column? {
        resource.columns.first { $0.name.utf8.elementsEqual(key) }
    }

    /// `ValueKind.check` for a value that is not JSON null.
    private static func fits(_ value: ObjectMembers.Value, _ kind: ValueKind, in bytes: [UInt8]) -> Bool {
        switch (kind, value) {
        case (.any, _): return true
        case (.string, .string): return true
        case (.uuid, .string(let range, escaped: false)): return isUUID(bytes[range])
        case (.integer(let min, let max), .number(let range)): return integer(bytes[range]).map { $0 >= min && $0 <= max } ?? false
        case (.number, .number): return true
        case (.boolean, .boolean): return true
        case (.array, .array): return true
        case (.scalar, .string), (.scalar, .number), (.scalar, .boolean): return true
        default: return false
        }
    }

    /// Plain decimal digits with an optional minus, as an Int64; nil for anything else.
    private static func integer(_ digits: ArraySlice<UInt8>) -> Int64? {
        var rest = digits[...]
        let negative = rest.first == 0x2D
        if negative { rest = rest.dropFirst() }
        guard !rest.isEmpty, rest.count <= 19, rest.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        guard let magnitude = Int64(String(decoding: rest, as: UTF8.self)) else { return nil }
        return negative ? -magnitude : magnitude
    }

    /// `ValueKind.uuidPattern`: 8-4-4-4-12 hex digits, each hyphen optional.
    private static func isUUID(_ text: ArraySlice<UInt8>) -> Bool {
        var index = text.startIndex
        for (group, length) in [8, 4, 4, 4, 12].enumerated() {
            if group > 0, index < text.endIndex, text[index] == 0x2D { index += 1 }
            for _ in 0..<length {
                guard index < text.endIndex, isHex(text[index]) else { return false }
                index += 1
            }
        }
        return index == text.endIndex
    }

    private static func isHex(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66)
    }
}
