import Crypto
import CryptoExtras
import FerryBase
import FerryHTTP
import FerryHTTPTestSupport
import Foundation

/// An identity provider for tests: signing keys of each algorithm Ferry
/// verifies, a JWKS served over HTTP on a loopback port (which can rotate
/// keys, go down, and counts its fetches), and JWTs signed with swift-crypto
/// directly, so that nothing of Ferry's verification (jwt-kit) signs what it checks.
public final class TestIdentityProvider: Sendable {
    /// The `iss` of its tokens.
    public let issuer: String
    /// The `aud` of its tokens by default.
    public let audience: String
    /// An HS256 secret (for a provider configured with `secret`).
    public let secret = "a-test-secret-of-more-than-thirty-two-bytes"
    private let server: HTTPServer
    private let state: Locked<State>

    /// A signing key and how its public half is published.
    public struct SigningKey: Sendable {
        public let kid: String
        public let algorithm: String
        fileprivate let sign: @Sendable ([UInt8]) -> [UInt8]
        /// The public JWK, as JSON members.
        public let jwk: [(String, JSONValue)]
        /// The public key in PEM (RSA keys only): what an alg-confusion attacker uses as an HS256 secret.
        public var publicPEM = ""
    }

    private struct State {
        var published: [SigningKey]
        var down = false
        var fetches = 0
        /// While set, a fetch of the JWKS hangs (until cleared or stopped).
        var hanging = false
        /// Fetches hanging now.
        var hung = 0
    }

    /// A provider with one key of each asymmetric algorithm published, its JWKS served on a free port.
    public init(issuer: String = "https://idp.test/realms/\(UUID().uuidString.prefix(8))", audience: String = "ferry") throws {
        self.issuer = issuer
        self.audience = audience
        let keys = [try Self.rsaKey(kid: "rsa-1"), Self.ecKey(kid: "ec-1"), Self.edKey(kid: "ed-1")]
        let state = Locked(State(published: keys))
        self.state = state
        var router = Router()
        router.get("/jwks.json") { _, _ in
            let hangs = state.withLock { state -> Bool in
                state.fetches += 1
                if state.hanging { state.hung += 1 }
                return state.hanging
            }
            if hangs {
                // A provider that accepts the connection and never answers, until released.
                let _: Bool = state.withLockWaiting(until: LockDeadline(after: .seconds(300))) { state, wake in
                    if !state.hanging || wake == .timedOut {
                        state.hung -= 1
                        return true
                    }
                    return nil
                }
            }
            let (down, keys) = state.withLock { state -> (Bool, [SigningKey]) in (state.down, state.published) }
            if down { return .text("the provider is down", status: 503) }
            return .json(JSONValue.object([("keys", .array(keys.map { .object($0.jwk) }))]).bytes)
        }
        server = try TestHTTPServer.start(responder: router)
    }

    /// Where the JWKS is served.
    public var jwksURL: String { "http://127.0.0.1:\(server.port)/jwks.json" }

    /// How many times the JWKS was fetched.
    public var fetches: Int { state.withLock { $0.fetches } }

    /// While down, the JWKS answers 503.
    public func setDown(_ down: Bool) { state.withLock { $0.down = down } }

    /// While hanging, a fetch of the JWKS gets no answer (the connection stays
    /// open); clearing it lets the fetches hanging go on.
    public func setHanging(_ hanging: Bool) {
        state.withLock { $0.hanging = hanging }
        state.broadcast()
    }

    /// How many fetches hang now.
    public var hangingFetches: Int { state.withLock { $0.hung } }

    /// The keys published now.
    public var keys: [SigningKey] { state.withLock { $0.published } }

    /// The published key with `kid`.
    public func key(_ kid: String) -> SigningKey? { keys.first { $0.kid == kid } }

    /// Publishes a new RSA key (keeping the others unless `replacing`), and returns it.
    @discardableResult
    public func rotate(kid: String, replacing: Bool = false) throws -> SigningKey {
        let key = try Self.rsaKey(kid: kid)
        state.withLock { state in
            if replacing { state.published = [] }
            state.published.append(key)
        }
        return key
    }

    /// Stops publishing the key `kid` (its tokens name a key that is gone).
    public func withdraw(kid: String) {
        state.withLock { $0.published.removeAll { $0.kid == kid } }
    }

    /// A key made but not published (a token signed with it names an unknown `kid`).
    public func unpublishedKey(kid: String) throws -> SigningKey { try Self.rsaKey(kid: kid) }

    /// The standard claims of a token for `subject`, valid from a minute ago for `lifetime` seconds.
    public func claims(subject: String, lifetime: Int = 3600, extra: [(String, JSONValue)] = []) -> [(String, JSONValue)] {
        let now = Int(Date().timeIntervalSince1970)
        return [
            ("iss", .string(issuer)), ("aud", .string(audience)), ("sub", .string(subject)),
            ("iat", .int(now - 60)), ("nbf", .int(now - 60)), ("exp", .int(now + lifetime)),
        ] + extra
    }

    /// A token for `subject` signed with the key `kid` (the RSA key by default).
    public func token(subject: String, kid: String = "rsa-1", lifetime: Int = 3600, extra: [(String, JSONValue)] = []) -> String {
        guard let key = key(kid) else { preconditionFailure("no published key \(kid)") }
        return sign(claims: claims(subject: subject, lifetime: lifetime, extra: extra), with: key)
    }

    /// `claims` signed with `key`, its header `{"alg", "typ", "kid"}`.
    public func sign(claims: [(String, JSONValue)], with key: SigningKey) -> String {
        let header = JSONValue.object([("alg", .string(key.algorithm)), ("typ", "JWT"), ("kid", .string(key.kid))])
        return Self.sign(header: header.bytes, payload: JSONValue.object(claims).bytes, with: key.sign)
    }

    /// A token of these exact header and payload bytes, signed by `sign` (nothing for an empty signature).
    public static func sign(header: [UInt8], payload: [UInt8], with sign: (@Sendable ([UInt8]) -> [UInt8])?) -> String {
        let input = base64URL(header) + "." + base64URL(payload)
        return input + "." + base64URL(sign?(Array(input.utf8)) ?? [])
    }

    /// The signing function of `key`, for hand-made tokens.
    public static func signer(_ key: SigningKey) -> @Sendable ([UInt8]) -> [UInt8] { key.sign }

    /// An HS256 signer with `secret` as the key's bytes.
    public static func hmacSigner(_ secret: [UInt8]) -> @Sendable ([UInt8]) -> [UInt8] {
        { input in Array(HMAC<SHA256>.authenticationCode(for: input, using: SymmetricKey(data: secret))) }
    }

    /// Base64url without padding.
    public static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    private static func rsaKey(kid: String) throws -> SigningKey {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let primitives = try key.publicKey.getKeyPrimitives()
        return SigningKey(
            kid: kid, algorithm: "RS256",
            sign: { input in
                (try? Array(key.signature(for: input, padding: .insecurePKCS1v1_5).rawRepresentation)) ?? []
            },
            jwk: [
                ("kty", "RSA"), ("kid", .string(kid)), ("use", "sig"), ("alg", "RS256"),
                ("n", .string(base64URL(Array(primitives.modulus)))), ("e", .string(base64URL(Array(primitives.publicExponent)))),
            ],
            publicPEM: key.publicKey.pemRepresentation)
    }

    private static func ecKey(kid: String) -> SigningKey {
        let key = P256.Signing.PrivateKey()
        let point = Array(key.publicKey.x963Representation)  // 0x04 || x || y
        return SigningKey(
            kid: kid, algorithm: "ES256",
            sign: { input in
                (try? Array(key.signature(for: input).rawRepresentation)) ?? []
            },
            jwk: [
                ("kty", "EC"), ("kid", .string(kid)), ("crv", "P-256"), ("alg", "ES256"),
                ("x", .string(base64URL(Array(point[1...32])))), ("y", .string(base64URL(Array(point[33...64])))),
            ])
    }

    private static func edKey(kid: String) -> SigningKey {
        let key = Curve25519.Signing.PrivateKey()
        return SigningKey(
            kid: kid, algorithm: "EdDSA",
            sign: { input in
                (try? Array(key.signature(for: input))) ?? []
            },
            jwk: [
                ("kty", "OKP"), ("kid", .string(kid)), ("crv", "Ed25519"),
                ("x", .string(base64URL(Array(key.publicKey.rawRepresentation)))),
            ])
    }

    /// Stops the JWKS server (releasing any fetch it holds first).
    public func stop() {
        setHanging(false)
        server.shutdown()
    }
}
