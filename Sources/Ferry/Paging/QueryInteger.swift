/// A whole number in a query parameter (`limit`, `page`): decimal digits only, at most nine.
///
/// Swift's `Int(_:)` also takes `+5` and `-0`, spellings the contract refuses (docs/API.md,
/// "Query parameters"): one definition, so every parameter refuses the same ones. Here,
/// with paging's `page`, the lowest step that reads one (StepDirectionTests).
enum QueryInteger {
    static func parse(_ text: String) -> Int? {
        guard (1...9).contains(text.utf8.count), text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(text)
    }
}
