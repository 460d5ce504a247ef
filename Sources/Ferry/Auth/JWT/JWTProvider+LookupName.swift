import FerryHTTP

extension JWTProvider {
    /// The most bytes a lookup name may have: an email address's limit (RFC 5321's 254) with room to spare.
    static let lookupNameMaxBytes = 320

    /// The user's lookup name in a verified token's `claims` (core 0029): the
    /// value of ``lookupClaim`` when it is a string of the shape
    /// `GET /v1/users/lookup` takes (``UserName/isValid(_:maxBytes:)``;
    /// every ordinary email address has it), else nil. An `email` is taken
    /// only when `email_verified` is true (the boolean, or the string "true"
    /// that Sign in with Apple sends): an unverified address is one anyone may
    /// type at their provider, and would let them be found as someone else.
    func lookupName(in claims: [String: JSONConfigValue]) -> String? {
        guard let claim = lookupClaim, case .string(let value)? = claims[claim] else { return nil }
        if claim == "email" {
            switch claims["email_verified"] {
            case .bool(true)?, .string("true")?: break
            default: return nil
            }
        }
        return UserName.isValid(value, maxBytes: Self.lookupNameMaxBytes) ? value : nil
    }
}
