/// Whether a token is an access token at all (issue 51): a provider signs ID
/// tokens and logout tokens with the same keys, often for the same audience,
/// and neither is meant to open an API.
///
/// - The header's `typ` must be one of the provider's `token_types`, by
///   default `at+jwt` (RFC 9068 §2.1), `JWT` and none: most providers (Auth0
///   without its RFC 9068 profile, Keycloak, Azure AD, Supabase, Firebase)
///   still write `JWT` or nothing in their access tokens. Compared without
///   case and without an `application/` prefix (RFC 7515 §4.1.9).
/// - A Security Event Token is never accepted: `typ` `logout+jwt` or
///   `secevent+jwt`, or an `events` claim (RFC 8417 §2.2; an OpenID
///   back-channel logout token carries one), whatever `token_types` says.
/// - An ID token is refused unless the provider sets `id_tokens`: one that
///   says so in the claims Ferry can read, `nonce`, `at_hash` or `c_hash`
///   (OpenID Connect Core §2, §3.1.3.6, §3.3.2.11), Cognito's `token_use:
///   "id"`, or Keycloak's `typ: "ID"` claim. Firebase and Cognito apps send
///   ID tokens on purpose; they set `id_tokens: true`.
struct JWTTypeCheck: Sendable {
    /// The accepted `typ` values, normalized; nil stands for a token without one.
    let accepted: Set<String?>
    /// Whether ID tokens are accepted (`id_tokens`).
    let idTokens: Bool

    init(tokenTypes: [String?], idTokens: Bool) {
        accepted = Set(tokenTypes.map { $0.map(Self.normalized) })
        self.idTokens = idTokens
    }

    /// `typ` lowercased, an `application/` prefix dropped.
    static func normalized(_ type: String) -> String {
        let lower = type.lowercased()
        return lower.hasPrefix("application/") ? String(lower.dropFirst("application/".count)) : lower
    }

    /// Checks the header's `typ` (nil when absent) and the claims.
    func check(type: String?, claims: [String: JSONConfigValue]) throws(JWTRefusal) {
        let normalized = type.map(Self.normalized)
        if normalized == "logout+jwt" || normalized == "secevent+jwt" || claims["events"] != nil {
            throw .wrongType("a security event token (a logout token) is not an access token")
        }
        guard accepted.contains(normalized) else {
            throw .wrongType("typ \(type.map { String($0.prefix(64)).debugDescription } ?? "absent") is not among the provider's token_types")
        }
        guard !idTokens else { return }
        let idMarkers = ["nonce", "at_hash", "c_hash"].filter { claims[$0] != nil }
        if !idMarkers.isEmpty || claims["token_use"] == .string("id") || claims["typ"] == .string("ID") {
            throw .wrongType(
                "an ID token (it carries \(idMarkers.first ?? (claims["token_use"] != nil ? "token_use" : "typ"))) is not an access token; set id_tokens to accept it"
            )
        }
    }
}
