import FerryHTTP
import Foundation

/// One identity provider whose JWTs Ferry accepts: an entry of
/// `auth.jwt_providers`. Its keys come from a JWKS URL (fetched at start and
/// cached), a JWKS file, a JWKS inline, or an HS256 secret, in any mix.
public struct JWTProvider: Sendable, Equatable, CustomStringConvertible {
    /// The `iss` its tokens carry, compared exactly.
    public var issuer: String
    /// The `aud` values accepted; a token must name at least one.
    public var audiences: [String]
    /// Where its JSON Web Key Set is published (`https://…/.well-known/jwks.json`).
    public var jwksURL: URL?
    /// A JWKS file, read at start.
    public var jwksFile: String?
    /// A JWKS written into the configuration, as JSON text.
    public var jwks: String?
    /// An HS256 shared secret (at least 32 bytes), as providers such as Supabase hand it out. Never printed.
    public var secret: String?
    /// The claim whose value names the user; `sub` by default.
    public var userClaim = "sub"
    /// The algorithms its keys may be pinned to.
    public var algorithms: [String] = JWTProvider.supportedAlgorithms
    /// The header `typ` values accepted, nil standing for none (``JWTTypeCheck``).
    public var tokenTypes: [String?] = JWTProvider.defaultTokenTypes
    /// Whether ID tokens are accepted as access tokens (Firebase, Cognito).
    public var idTokens = false
    /// The claim kept as the user's lookup name, by which `GET /v1/users/lookup`
    /// finds them (core 0029); nil, the default, keeps none. `email` is kept only
    /// when the token says `email_verified: true` (``lookupName(in:)``).
    public var lookupClaim: String?

    /// RFC 9068's `at+jwt`, and `JWT` or nothing, which most providers' access tokens still carry.
    public static let defaultTokenTypes: [String?] = ["at+jwt", "JWT", nil]

    /// The algorithms Ferry verifies.
    public static let supportedAlgorithms = ["RS256", "ES256", "EdDSA", "HS256"]

    public init(issuer: String, audiences: [String]) {
        self.issuer = issuer
        self.audiences = audiences
    }

    /// Everything but the secret, which is shown as `***`, and the credentials a
    /// `jwks_url` may carry (its user, password and query: ``Foundation/URL/redacted``).
    public var description: String {
        "JWTProvider(issuer: \(issuer), audiences: \(audiences), jwks_url: \(jwksURL?.redacted ?? "-"), "
            + "jwks_file: \(jwksFile ?? "-"), jwks: \(jwks == nil ? "-" : "inline"), secret: \(secret == nil ? "-" : "***"), "
            + "user_claim: \(userClaim), algorithms: \(algorithms), token_types: \(tokenTypes.map { $0 ?? "null" }), id_tokens: \(idTokens), "
            + "lookup_claim: \(lookupClaim ?? "-"))"
    }

    /// The members an entry may have.
    static let members: Set<String> = [
        "issuer", "audience", "jwks_url", "jwks_file", "jwks", "secret", "user_claim", "algorithms", "token_types", "id_tokens",
        "lookup_claim",
    ]

    /// The providers of `auth.jwt_providers`' JSON text, or the reason it is refused,
    /// naming the entry and member (`[1].jwks_url: …`).
    static func parseList(_ text: String) -> Result<[JWTProvider], ProviderError> {
        guard let root = try? JSONDecoder().decode(JSONConfigValue.self, from: Data(text.utf8)) else {
            return .failure(ProviderError("not valid JSON"))
        }
        guard case .array(let entries) = root else { return .failure(ProviderError("expected a list of objects")) }
        var providers: [JWTProvider] = []
        for (index, entry) in entries.enumerated() {
            do throws(ProviderError) {
                let provider = try parse(entry)
                if providers.contains(where: { $0.issuer == provider.issuer }) {
                    throw ProviderError("issuer: \(provider.issuer) is configured twice")
                }
                providers.append(provider)
            } catch {
                return .failure(ProviderError("[\(index)].\(error.reason)"))
            }
        }
        return .success(providers)
    }

    /// A refusal of an entry, naming the member.
    struct ProviderError: Error, Equatable {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    private static func parse(_ entry: JSONConfigValue) throws(ProviderError) -> JWTProvider {
        guard case .object(let object) = entry else { throw ProviderError("entry: expected an object") }
        if let unknown = object.keys.sorted().first(where: { !members.contains($0) }) {
            throw ProviderError("\(unknown): unknown member (known: \(members.sorted().joined(separator: ", ")))")
        }
        guard case .string(let issuer)? = object["issuer"], !issuer.isEmpty else {
            throw ProviderError("issuer: required, a non-empty string (the iss of its tokens)")
        }
        let audiences: [String]
        switch object["audience"] {
        case .string(let one)? where !one.isEmpty: audiences = [one]
        case .array(let items)?:
            audiences = items.compactMap { if case .string(let s) = $0, !s.isEmpty { s } else { nil } }
            guard audiences.count == items.count, !audiences.isEmpty else {
                throw ProviderError("audience: a non-empty string or list of non-empty strings")
            }
        default: throw ProviderError("audience: required, a string or list of strings (the aud of its tokens)")
        }
        var provider = JWTProvider(issuer: issuer, audiences: audiences)
        provider.jwksURL = try url(object["jwks_url"])
        provider.jwksFile = try string(object["jwks_file"], "jwks_file")
        if let inline = object["jwks"] {
            guard case .object = inline else { throw ProviderError("jwks: expected a JSON Web Key Set object") }
            provider.jwks = String(decoding: inline.jsonValue.bytes, as: UTF8.self)
        }
        provider.secret = try string(object["secret"], "secret")
        if let secret = provider.secret, secret.utf8.count < 32 {
            throw ProviderError("secret: an HS256 secret must have at least 32 bytes")
        }
        provider.userClaim = try string(object["user_claim"], "user_claim") ?? "sub"
        if let list = object["algorithms"] {
            guard case .array(let items) = list, !items.isEmpty else { throw ProviderError("algorithms: a non-empty list") }
            provider.algorithms = []
            for item in items {
                guard case .string(let name) = item, supportedAlgorithms.contains(name) else {
                    throw ProviderError("algorithms: each one of \(supportedAlgorithms.joined(separator: ", "))")
                }
                provider.algorithms.append(name)
            }
        }
        if let list = object["token_types"] {
            guard case .array(let items) = list, !items.isEmpty else {
                throw ProviderError("token_types: a non-empty list of typ values (strings; null for a token without typ)")
            }
            provider.tokenTypes = []
            for item in items {
                switch item {
                case .null: provider.tokenTypes.append(nil)
                case .string(let type) where !type.isEmpty: provider.tokenTypes.append(type)
                default: throw ProviderError("token_types: each a non-empty string, or null for a token without typ")
                }
            }
        }
        switch object["id_tokens"] {
        case nil: break
        case .bool(let accept)?: provider.idTokens = accept
        default: throw ProviderError("id_tokens: true or false")
        }
        provider.lookupClaim = try string(object["lookup_claim"], "lookup_claim")
        guard provider.jwksURL != nil || provider.jwksFile != nil || provider.jwks != nil || provider.secret != nil else {
            throw ProviderError("jwks_url: a provider needs keys: jwks_url, jwks_file, jwks or secret")
        }
        return provider
    }

    private static func string(_ value: JSONConfigValue?, _ name: String) throws(ProviderError) -> String? {
        switch value {
        case nil: return nil
        case .string(let text)? where !text.isEmpty: return text
        default: throw ProviderError("\(name): expected a non-empty string")
        }
    }

    private static func url(_ value: JSONConfigValue?) throws(ProviderError) -> URL? {
        guard let text = try string(value, "jwks_url") else { return nil }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http",
            url.host != nil
        else {
            throw ProviderError("jwks_url: expected an http or https URL")
        }
        return url
    }

    /// The list back as `auth.jwt_providers`' JSON text (the secret included: this is the configuration itself).
    static func jsonText(_ providers: [JWTProvider]) -> String {
        let entries: [JSONValue] = providers.map { provider in
            var members: [(String, JSONValue)] = [("issuer", .string(provider.issuer))]
            members.append(("audience", .array(provider.audiences.map { .string($0) })))
            if let url = provider.jwksURL { members.append(("jwks_url", .string(url.absoluteString))) }
            if let file = provider.jwksFile { members.append(("jwks_file", .string(file))) }
            if let jwks = provider.jwks { members.append(("jwks", .raw(Array(jwks.utf8)))) }
            if let secret = provider.secret { members.append(("secret", .string(secret))) }
            members.append(("user_claim", .string(provider.userClaim)))
            members.append(("algorithms", .array(provider.algorithms.map { .string($0) })))
            members.append(("token_types", .array(provider.tokenTypes.map { $0.map { .string($0) } ?? .null })))
            members.append(("id_tokens", .bool(provider.idTokens)))
            if let claim = provider.lookupClaim { members.append(("lookup_claim", .string(claim))) }
            return .object(members)
        }
        return String(decoding: JSONValue.array(entries).bytes, as: UTF8.self)
    }
}

extension JSONConfigValue {
    /// The value as FerryHTTP writes JSON (member names sorted, so that equal values write equal text).
    var jsonValue: JSONValue {
        switch self {
        case .null: .null
        case .bool(let value): .bool(value)
        case .integer(let value): .int(value)
        case .number(let value): .double(value)
        case .string(let value): .string(value)
        case .array(let items): .array(items.map(\.jsonValue))
        case .object(let members): .object(members.sorted { $0.key < $1.key }.map { ($0.key, $0.value.jsonValue) })
        }
    }
}
