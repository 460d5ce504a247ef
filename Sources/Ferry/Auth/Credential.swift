/// What a request's bearer is. Only hashes are kept past the request; a JWT
/// travels with its request because it is verified, on a cache miss, where
/// the request reaches the database.
package enum Credential: Sendable, Equatable {
    /// One of Ferry's own tokens, by its hash.
    case token(hash: String)
    /// A JWT, with its hash (its key in the verification cache).
    case jwt(hash: String, token: String)

    /// The hash of the token, whichever kind.
    var hash: String {
        switch self {
        case .token(let hash), .jwt(let hash, _): hash
        }
    }

    /// The hash of one of Ferry's own tokens; nil for a JWT.
    var tokenHash: String? {
        if case .token(let hash) = self { hash } else { nil }
    }
}
