/// A whole number in a query parameter (`limit`, `page`, `modified_since`): decimal digits only.
///
/// Swift's `Int(_:)` also takes `+5` and `-0`, spellings the contract refuses (docs/API.md,
/// "Query parameters"): one definition, so every parameter refuses the same ones. Here,
/// with paging's `page`, the lowest step that reads one (StepDirectionTests).
enum QueryInteger {
    /// A count or a page: at most nine digits.
    static func parse(_ text: String) -> Int? {
        guard text.utf8.count <= 9, let value = parse64(text) else { return nil }
        return Int(value)
    }

    /// Any value an Int64 holds (milliseconds since the epoch).
    static func parse64(_ text: String) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int64(text)
    }
}
