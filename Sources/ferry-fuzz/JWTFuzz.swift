import Crypto
import Ferry
import Foundation
import Logging

/// JWTs: the input is a bearer token, read by `CompactJWT` and verified by a
/// `JWTVerifier` holding one HS256 secret (``secret``) for issuer ``issuer``,
/// at the fixed time ``now``.
///
/// Properties: a token read has exactly two dots, at most `CompactJWT.maxBytes`
/// bytes and its header's `alg`; verification either refuses with a
/// `JWTRefusal` or accepts, and it accepts only a token whose signature is
/// HMAC-SHA256 of its first two parts under the secret (checked with
/// swift-crypto here, not through jwt-kit), whose `alg` is HS256, and whose
/// `exp` is ahead; the claims it hands on are a JSON object. No token read
/// has a member name twice in one object of its header or payload
/// (``FuzzDuplicateNames``, a reader of the fuzz target's own).
enum JWTFuzz {
    static let issuer = "https://fuzz.test"
    static let secret = "ferry-fuzz-secret-of-at-least-32-bytes"
    static let now = 1_800_000_000.0

    static let verifier: JWTVerifier = {
        var provider = JWTProvider(issuer: issuer, audiences: ["ferry"])
        provider.secret = secret
        do {
            return try JWTVerifier(
                providers: [provider], timing: KeyTiming(refresh: .seconds(600), grace: .seconds(600), minRefetch: .seconds(30)),
                leewaySeconds: 60, logger: Logger(label: "fuzz", factory: { _ in SwiftLogNoOpLogHandler() }))
        } catch {
            fatalError("the fuzz verifier does not start: \(error)")
        }
    }()

    static func run(_ input: UnsafeRawBufferPointer) {
        let token = String(decoding: input, as: UTF8.self)
        if let jwt = try? CompactJWT(token) {
            require(token.utf8.count <= CompactJWT.maxBytes, "a token of \(token.utf8.count) bytes was read")
            require(token.utf8.filter { $0 == UInt8(ascii: ".") }.count == 2, "a token without exactly two dots was read")
            require(!jwt.algorithm.isEmpty || token.contains("\"alg\""), "an alg from nowhere")
            // Issue 51: no token read repeats a member name, in its header or its payload.
            let parts = token.split(separator: ".", omittingEmptySubsequences: false)
            for part in parts.prefix(2) {
                let json = Base64URLAlphabet.decode(String(part)) ?? Data()
                require(FuzzDuplicateNames.check(json) != true, "a token with a member twice was read")
            }
        }
        let verified: VerifiedJWT
        do {
            verified = try verifier.verify(token, now: now)
        } catch is JWTRefusal {
            return
        } catch {
            return require(false, "verification threw \(error), not a refusal")
        }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        require(parts.count == 3, "a verified token of \(parts.count) parts")
        let input = Array(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        let mac = Array(HMAC<SHA256>.authenticationCode(for: input, using: SymmetricKey(data: Array(secret.utf8))))
        require(Base64URLAlphabet.encode(mac) == String(parts[2]), "a token verified whose signature is not the secret's HMAC")
        let header = (try? JSONSerialization.jsonObject(with: Base64URLAlphabet.decode(String(parts[0])) ?? Data())) as? [String: Any]
        require(header?["alg"] as? String == "HS256", "a token verified with alg \(String(describing: header?["alg"]))")
        require(verified.acceptedUntilMs > Int64(now * 1000), "an expired token verified")
        require(verified.issuer == issuer && !verified.subject.isEmpty, "verified as \(verified.issuer) / \(verified.subject)")
        let claims = try? JSONSerialization.jsonObject(with: Data(verified.claims.utf8))
        require(claims is [String: Any], "claims that are not a JSON object: \(verified.claims.prefix(80))")
    }
}
