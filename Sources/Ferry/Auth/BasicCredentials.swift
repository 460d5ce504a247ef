import FerryHTTP
import Foundation

/// `Authorization: Basic base64(name:password)` (RFC 7617).
public struct BasicCredentials: Sendable, Equatable {
    /// The user name.
    public let name: String
    /// The password; never logged.
    public let password: String

    /// The credentials of a request, or nil when absent or malformed.
    /// - Throws: 400 `bad_request` when they hold U+0000, which no name or password can
    ///   (PostgreSQL text cannot hold it: asked, it failed as a 500).
    public init?(_ request: HTTPRequest) throws(Problem) {
        guard let value = request.headers["Authorization"] else { return nil }
        let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "basic",
            parts[1].utf8.count <= 4096,
            let data = Data(base64Encoded: String(parts[1]).trimmingCharacters(in: .whitespaces)),
            let text = String(data: data, encoding: .utf8),
            let colon = text.firstIndex(of: ":")
        else { return nil }
        guard !text.utf8.contains(0) else {
            throw Problem(400, .badRequest, "the Basic credentials hold U+0000, which no name or password can")
        }
        name = String(text[..<colon])
        password = String(text[text.index(after: colon)...])
        guard !name.isEmpty, name.utf8.count <= 200, password.utf8.count <= 1024 else { return nil }
    }
}
