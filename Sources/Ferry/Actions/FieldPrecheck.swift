// `package`, not internal: ferry-fuzz feeds it client bytes directly (bench/fuzz/README.md).
/// Whether every field of a single PATCH or PUT body certainly passes
/// ``FieldValidation``: then ``FastUpdatePlan`` can leave the per-field check
/// out of its statement.
///
/// Why: in PostgreSQL that check is one expression over every column, built
/// and run for each statement, and it was a sizeable share of PostgreSQL's work
/// in a fast-path PATCH (see bench/README.md). Here it is a walk over a few bytes.
///
/// It must never pass a body FieldValidation would fail (that would write
/// what should have been a 422), so it answers true only when sure and false
/// otherwise; false just means PostgreSQL checks, as before. It is stricter
/// than FieldValidation where being exact would take a JSON decoder: an
/// integer must be written as plain digits (`1.0` and `1e2` are left to
/// PostgreSQL), a uuid must be unescaped and hyphenated all or nothing, and a
/// key given twice must be valid both times (jsonb keeps the last).
package struct FieldPrecheck {
    let resource: Resource
    /// `.patch` or `.put` (the path names the row, so `id` in the body is ignored).
    let mode: WriteMode

    /// Whether every member of `members` (read from `bytes`) certainly passes.
    package func passes(_ members: ObjectMembers, in bytes: [UInt8]) -> Bool {
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

    /// A precheck of `mode` writes to `resource`.
    package init(resource: Resource, mode: WriteMode) {
        self.resource = resource
        self.mode = mode
    }

    private func column(named key: ArraySlice<UInt8>) -> Column? {
        resource.columns.first { $0.name.utf8.elementsEqual(key) }
    }

    /// `ValueKind.check` for a value that is not JSON null. Uuids and integers go through
    /// `ValueKind.accepts(id:)`, the check path and query ids get: it takes only digits
    /// (a sign allowed) in range and 32-hex-digit uuids with all four hyphens or none, a subset
    /// of what FieldValidation's pattern and numeric cast take.
    private static func fits(_ value: ObjectMembers.Value, _ kind: ValueKind, in bytes: [UInt8]) -> Bool {
        switch (kind, value) {
        case (.any, _): return true
        case (.string, .string): return true
        case (.uuid, .string(let range, escaped: false)), (.integer, .number(let range)):
            return kind.accepts(id: String(decoding: bytes[range], as: UTF8.self))
        case (.number, .number): return true
        case (.boolean, .boolean): return true
        case (.array, .array): return true
        case (.scalar, .string), (.scalar, .number), (.scalar, .boolean): return true
        default: return false
        }
    }
}
