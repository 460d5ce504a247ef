/// The claim checks of RFC 7519 §4.1 that Ferry makes once a signature
/// verifies: types first, then time with the configured leeway, then the
/// audience, then the claim that names the user. Pure, so it is tested
/// without keys or clocks.
struct JWTClaimsCheck: Sendable {
    /// The audiences the provider's tokens may name; one must match.
    let audiences: [String]
    /// The claim that names the user (`sub` by default).
    let userClaim: String
    /// The clock skew tolerated on `exp`, `nbf` and `iat`, in seconds.
    let leewaySeconds: Double

    /// What a token that passes says.
    struct Passed: Equatable, Sendable {
        /// The user claim's value.
        let subject: String
        /// `exp` plus the leeway, in ms since the Unix epoch: until when the token is accepted.
        let acceptedUntilMs: Int64
    }

    /// Checks `claims` at `now` (seconds since the Unix epoch).
    func check(_ claims: [String: JSONConfigValue], now: Double) throws(JWTRefusal) -> Passed {
        guard let expires = try Self.time(claims, "exp") else { throw .invalidClaim("exp is required") }
        let notBefore = try Self.time(claims, "nbf")
        let issuedAt = try Self.time(claims, "iat")
        let audience = try Self.audience(claims)
        for name in ["sub", "jti"] {
            if let value = claims[name], case .string = value {
            } else if claims[name] != nil {
                throw .invalidClaim("\(name) must be a string")
            }
        }
        guard now < expires + leewaySeconds else { throw .expired }
        if let notBefore, notBefore > now + leewaySeconds { throw .notYetValid }
        if let issuedAt, issuedAt > now + leewaySeconds { throw .notYetValid }
        guard let audience, audience.contains(where: audiences.contains) else { throw .wrongAudience }
        guard case .string(let subject)? = claims[userClaim], !subject.isEmpty, subject.utf8.count <= 1024 else {
            throw .invalidClaim("\(userClaim) must be a string of 1 to 1024 bytes")
        }
        let until = min(expires + leewaySeconds, 253_402_300_799)  // the end of year 9999: no overflow below
        return Passed(subject: subject, acceptedUntilMs: Int64(until * 1000))
    }

    /// A NumericDate claim (seconds since the epoch, fractions allowed), nil when absent.
    private static func time(_ claims: [String: JSONConfigValue], _ name: String) throws(JWTRefusal) -> Double? {
        switch claims[name] {
        case nil: return nil
        case .integer(let value)?: return Double(value)
        case .number(let value)? where value.isFinite: return value
        default: throw .invalidClaim("\(name) must be a number of seconds since the epoch")
        }
    }

    /// `aud`: one string or an array of strings; nil when absent.
    private static func audience(_ claims: [String: JSONConfigValue]) throws(JWTRefusal) -> [String]? {
        switch claims["aud"] {
        case nil: return nil
        case .string(let one)?: return [one]
        case .array(let items)?:
            var strings: [String] = []
            for item in items {
                guard case .string(let one) = item else { throw .invalidClaim("aud must be a string or an array of strings") }
                strings.append(one)
            }
            return strings
        default: throw .invalidClaim("aud must be a string or an array of strings")
        }
    }
}
