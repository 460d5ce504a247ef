/// The words Ferry uses for a refused field, by the stable `reason` code of an
/// `errors[]` entry.
///
/// PostgreSQL's own messages never reach a client: they name tables,
/// constraints and policies (the schema's internals, and for RLS a hint of
/// rows the caller cannot see), and they change between releases. Every
/// `errors[]` entry's `detail` is replaced here, wherever the entry was made
/// (`ferry.item_errors` in SQL, or `WriteFailure.itemErrors`).
enum ValidationReason {
    /// The client-facing detail for `reason`, naming `field` when there is one.
    static func detail(reason: String, field: String?) -> String {
        let subject = field.map { "\($0)" } ?? "a value"
        switch reason {
        case "check_violation": return "\(subject) is outside the values this resource accepts"
        case "unique_violation": return "another row already has this \(field.map { "\($0)" } ?? "value")"
        case "not_found": return "\(subject) names a row that does not exist or that the caller cannot see"
        case "not_null": return "\(subject) is required"
        case "exclusion_violation": return "\(subject) conflicts with another row"
        case "not_allowed": return "the caller may not write this row"
        case "parent_deleted": return "\(subject) names a row that has been deleted"
        case "required": return "\(subject) is required"
        case "duplicate": return "the request names this row more than once"
        case "read_only": return "\(subject) is set by the server"
        case "invalid_value" where field == "rank":
            return "rank is not a key (1 to 128 of 0-9A-Za-z, not ending in 0), first, last, {\"after\": id} or {\"before\": id}"
        default: return "\(subject) does not fit its column"
        }
    }

    /// `entry` with its `detail` in Ferry's words; entries without a `reason`
    /// (conflicts, 404s) keep what Ferry itself wrote.
    static func clean(_ entry: [String: Any]) -> [String: Any] {
        guard let reason = entry["reason"] as? String else { return entry }
        var entry = entry
        entry["detail"] = detail(reason: reason, field: entry["field"] as? String)
        return entry
    }
}
