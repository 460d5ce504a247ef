import FerryHTTP

/// Why a JWT was refused, each with the stable `code` of its 401 (docs/API.md,
/// "Sign-in with your identity provider's JWTs"). The detail says which check
/// failed and never repeats the token or a claim's value.
package enum JWTRefusal: Error, Equatable, Sendable {
    /// Longer than ``CompactJWT/maxBytes``.
    case tooLarge
    /// Not three base64url parts, a header or payload that is not a JSON
    /// object, a `crit` header, a member name twice in one object, or a claim
    /// holding U+0000.
    case malformed(String)
    /// `alg` is `none`, not one Ferry verifies, or not the one pinned to the key.
    case algorithm(String)
    /// `iss` names no configured provider.
    case unknownIssuer
    /// No key of the provider has the token's `kid`, even after a refetch.
    case unknownKey
    /// The signature does not verify.
    case badSignature
    /// A registered claim of the wrong JSON type, or the user claim missing.
    case invalidClaim(String)
    /// `exp` (plus the leeway) has passed.
    case expired
    /// `nbf` or `iat` (less the leeway) is still ahead.
    case notYetValid
    /// `aud` names none of the provider's audiences.
    case wrongAudience
    /// Not an access token: a `typ` outside the provider's `token_types`, a
    /// logout token, or an ID token where they are not accepted (``JWTTypeCheck``).
    case wrongType(String)

    /// The contract's code.
    var code: ProblemCode {
        switch self {
        case .tooLarge: .tokenTooLarge
        case .malformed: .tokenMalformed
        case .algorithm: .tokenAlgorithmRefused
        case .unknownIssuer: .tokenUnknownIssuer
        case .unknownKey: .tokenUnknownKey
        case .badSignature: .tokenBadSignature
        case .invalidClaim: .tokenInvalidClaim
        case .expired: .tokenExpired
        case .notYetValid: .tokenNotYetValid
        case .wrongAudience: .tokenWrongAudience
        case .wrongType: .tokenWrongType
        }
    }

    /// Ferry's sentence for people.
    var detail: String {
        switch self {
        case .tooLarge: "the token is longer than \(CompactJWT.maxBytes) bytes"
        case .malformed(let why): "the token is not a well-formed JWT: \(why)"
        case .algorithm(let why): "the token's algorithm is refused: \(why)"
        case .unknownIssuer: "the token's issuer (iss) is not a configured provider"
        case .unknownKey: "no key of the issuer has the token's key id (kid), even after fetching its keys again"
        case .badSignature: "the token's signature does not verify"
        case .invalidClaim(let why): "the token has an invalid claim: \(why)"
        case .expired: "the token has expired (exp)"
        case .notYetValid: "the token is not valid yet (nbf or iat is in the future)"
        case .wrongAudience: "the token's audience (aud) is not this server"
        case .wrongType(let why): "the token is not an access token: \(why)"
        }
    }

    /// The 401, with RFC 6750's `WWW-Authenticate` error so that generic OAuth
    /// clients know to fetch a new token.
    var problem: Problem {
        Problem(401, code, detail, headers: HTTPHeaders([("WWW-Authenticate", #"Bearer error="invalid_token""#)]))
    }

    /// Every code, for the OpenAPI document and the tests.
    static let codes = ProblemCode.allCases.filter { $0.rawValue.hasPrefix("token_") }.map(\.rawValue)
}

extension Problem {
    /// 503 `jwks_unavailable`: the provider's keys could not be fetched and the
    /// ones held are past `auth.jwks_grace_seconds` (or were never fetched).
    static func keysUnavailable(issuer: String, retryAfter seconds: Int) -> Problem {
        Problem(
            503, .jwksUnavailable,
            "the signing keys of \(issuer) could not be fetched, and the ones held are too old to trust",
            headers: HTTPHeaders([("Retry-After", String(max(1, seconds)))]))
    }

    /// 503 `jwks_unavailable` while the provider's keys are being fetched for
    /// a `kid` Ferry does not hold: the request is answered at once rather
    /// than holding a worker for the fetch (issue 51); the retry, a second
    /// later, finds the key if the provider published it.
    static func keysFetching(issuer: String) -> Problem {
        Problem(
            503, .jwksUnavailable,
            "the signing keys of \(issuer) are being fetched for the token's key id (kid); try again shortly",
            headers: HTTPHeaders([("Retry-After", "1")]))
    }
}
