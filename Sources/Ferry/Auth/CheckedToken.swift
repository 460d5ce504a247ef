/// What the token check (`PostgresGateway.tokenCheck`) returns for a live token:
/// `"<user id> <expiry in ms since the epoch>"`, one text so that the statement
/// keeps its single COALESCE that raises FR401 when no token matches.
struct CheckedToken: Equatable {
    /// The user the token names.
    let userID: String
    /// When the token expires, in ms since the Unix epoch.
    let expiresAtMs: Int64

    /// A checked token from its parts.
    init(userID: String, expiresAtMs: Int64) {
        self.userID = userID
        self.expiresAtMs = expiresAtMs
    }

    /// Reads the check's text; nil for anything else.
    init?(_ text: String) {
        guard let space = text.utf8.firstIndex(of: UInt8(ascii: " ")),
            let expiry = Int64(text[text.index(after: space)...])
        else { return nil }
        let user = String(text[..<space])
        guard !user.isEmpty else { return nil }
        userID = user
        expiresAtMs = expiry
    }
}
