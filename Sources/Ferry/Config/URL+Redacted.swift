import Foundation

extension URL {
    /// The URL as logs and the console show it: without a user name, password or query,
    /// which may hold a credential (`https://user:secret@idp/jwks?api_key=…` becomes
    /// `https://idp/jwks?…`). A JWT provider's `jwks_url` is the one such URL.
    var redacted: String {
        guard var parts = URLComponents(url: self, resolvingAgainstBaseURL: false) else { return "(a URL)" }
        parts.user = nil
        parts.password = nil
        let hadQuery = parts.query != nil
        parts.query = nil
        parts.fragment = nil
        return (parts.string ?? "(a URL)") + (hadQuery ? "?…" : "")
    }
}
