/// The value of a `rank` field in a write body: a key the client computed,
/// or one of the forms the server computes for simple clients.
///
/// `"first"` and `"last"` are the contract's words, so a client cannot write
/// those two strings as literal keys (both are valid base-62 keys); any other
/// string is a literal key, validated with FerryRank.
enum RankForm: Equatable {
    /// A literal key.
    case key(String)
    /// Before every row of the parent.
    case first
    /// After every row of the parent.
    case last
    /// Right after the row with this id.
    case after(String)
    /// Right before the row with this id.
    case before(String)

    /// The form of a decoded JSON value; nil for anything else (a number,
    /// null, another object), which the action's own validation reports.
    init?(json: Any) {
        if let string = json as? String {
            switch string {
            case "first": self = .first
            case "last": self = .last
            default: self = .key(string)
            }
            return
        }
        guard let object = json as? [String: Any], object.count == 1, let (name, value) = object.first,
            let id = Self.id(value)
        else { return nil }
        switch name {
        case "after": self = .after(id)
        case "before": self = .before(id)
        default: return nil
        }
    }

    /// Whether the server computes the key.
    var isComputed: Bool {
        if case .key = self { return false }
        return true
    }

    /// An id as JSON may carry it: a string, or an integer for integer keys.
    static func id(_ value: Any?) -> String? {
        if let string = value as? String { return string }
        if let number = value as? Int { return String(number) }
        return nil
    }
}
