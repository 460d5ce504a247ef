import Crypto
import FerryBase
import Foundation
import JWTKit

/// One key a provider signs with, its algorithm pinned when the key is read:
/// a token's `alg` must equal ``algorithm``, so the header can never choose
/// how a key is used (an RSA public key used as an HS256 secret, `none`).
/// The signature check is jwt-kit's.
struct VerifyingKey: Sendable {
    /// The key's `kid`; nil for a key without one (an HS256 secret).
    let keyID: String?
    /// `RS256`, `ES256`, `EdDSA` or `HS256`.
    let algorithm: String
    /// jwt-kit's verifier for that key and algorithm.
    let verifier: any JWTAlgorithm
    /// What tells this key from another with the same `kid`: the kid, the
    /// algorithm and a SHA-256 of the JWK as read. A key set that no longer
    /// holds it withdrew the key (``ProviderKeys``), also when the `kid` is
    /// reused for new key material.
    var identity = ""

    /// Whether `signature` signs `input`; a malformed signature is simply false.
    func verifies(_ signature: [UInt8], signs input: [UInt8]) -> Bool {
        (try? verifier.verify(signature, signs: input)) ?? false
    }
}

/// Reading keys: a JSON Web Key Set (RFC 7517) and an HS256 secret, into
/// ``VerifyingKey``s through jwt-kit's importers.
enum KeyImport {
    /// The keys of a JWKS document that Ferry can use for `algorithms`, and a
    /// sentence for each key it skipped (an encryption key, another
    /// algorithm, a symmetric key from a URL). Throws when the document is not a JWKS.
    static func keys(jwks text: String, algorithms: [String], symmetricAllowed: Bool) throws -> (keys: [VerifyingKey], skipped: [String]) {
        guard let root = try? JSONDecoder().decode(JSONConfigValue.self, from: Data(text.utf8)),
            case .object(let members) = root, case .array(let entries)? = members["keys"]
        else {
            throw KeyImportError("not a JSON Web Key Set (an object with a keys array)")
        }
        var keys: [VerifyingKey] = []
        var skipped: [String] = []
        for (index, entry) in entries.enumerated() {
            do {
                if let key = try key(entry, index: index, algorithms: algorithms, symmetricAllowed: symmetricAllowed) {
                    keys.append(key)
                }
            } catch {
                skipped.append("key \(index): \(error.reason)")
            }
        }
        return (keys, skipped)
    }

    /// An HS256 key from a shared secret (its UTF-8 bytes), with no `kid`.
    static func secret(_ secret: String) throws -> VerifyingKey {
        let verifier = try blocking {
            try await JWTKeyCollection().add(hmac: HMACKey(from: Array(secret.utf8)), digestAlgorithm: .sha256, kid: "secret")
                .getKey(for: "secret")
        }
        return VerifyingKey(keyID: nil, algorithm: "HS256", verifier: verifier, identity: "secret")
    }

    /// One JWK as a key, nil (with no complaint) for a key meant for encryption.
    private static func key(
        _ entry: JSONConfigValue, index: Int, algorithms: [String], symmetricAllowed: Bool
    ) throws(KeyImportError) -> VerifyingKey? {
        guard case .object(let jwk) = entry, case .string(let type)? = jwk["kty"] else { throw KeyImportError("no kty") }
        if case .string(let use)? = jwk["use"], use != "sig" { return nil }
        var keyID: String?
        if case .string(let kid)? = jwk["kid"] { keyID = kid }
        let algorithm: String
        switch (jwk["alg"], type, jwk["crv"]) {
        case (.string(let alg)?, _, _): algorithm = alg
        case (nil, "RSA", _): algorithm = "RS256"
        case (nil, "EC", .string("P-256")?): algorithm = "ES256"
        case (nil, "OKP", .string("Ed25519")?): algorithm = "EdDSA"
        case (nil, "oct", _): algorithm = "HS256"
        default: throw KeyImportError("kty \(type) without an alg Ferry can infer")
        }
        guard algorithms.contains(algorithm) else {
            throw KeyImportError("alg \(algorithm) is not among the provider's algorithms (\(algorithms.joined(separator: ", ")))")
        }
        let expectedType = ["RS256": "RSA", "ES256": "EC", "EdDSA": "OKP", "HS256": "oct"][algorithm]
        guard expectedType == type else { throw KeyImportError("alg \(algorithm) does not fit kty \(type)") }
        let kid = keyID ?? "ferry-key-\(index)"
        do {
            let verifier: any JWTAlgorithm
            if type == "oct" {
                guard symmetricAllowed else { throw KeyImportError("a symmetric key is not taken from a URL") }
                guard case .string(let k)? = jwk["k"], let secret = Base64URL.decode(k), secret.count >= 32 else {
                    throw KeyImportError("an oct key needs k, at least 32 bytes in base64url")
                }
                verifier = try blocking {
                    try await JWTKeyCollection().add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256, kid: JWKIdentifier(string: kid))
                        .getKey(for: JWKIdentifier(string: kid))
                }
            } else {
                var parsed = try JSONDecoder().decode(JWK.self, from: Data(entry.jsonValue.bytes))
                parsed.keyIdentifier = JWKIdentifier(string: kid)
                parsed.algorithm = JWK.Algorithm(rawValue: algorithm)
                let pinned = parsed
                verifier = try blocking {
                    try await JWTKeyCollection().add(jwk: pinned).getKey(for: JWKIdentifier(string: kid), alg: algorithm)
                }
            }
            guard verifier.name == algorithm else { throw KeyImportError("jwt-kit made a \(verifier.name) key for alg \(algorithm)") }
            let digest = SHA256.hash(data: entry.jsonValue.bytes).map { String(format: "%02x", $0) }.joined()
            return VerifyingKey(keyID: keyID, algorithm: algorithm, verifier: verifier, identity: "\(kid) \(algorithm) \(digest)")
        } catch let error as KeyImportError {
            throw error
        } catch {
            throw KeyImportError("unreadable \(type) key (\(error))")
        }
    }
}

/// Why a key, or a whole key set, could not be read.
struct KeyImportError: Error, Equatable {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}

/// Runs `body`, which is async only because jwt-kit's key collection is an
/// actor, to completion on the calling thread: keys are read at start-up, by
/// the key refresher and by a worker waiting on a refetch, never per request.
///
/// The task prefers ``KeyImportExecutor``, a serial Dispatch queue outside
/// Swift concurrency's cooperative pool, so its jobs (the actor's included)
/// never need a cooperative thread: a caller that blocks one of those (a test
/// starting a server) cannot starve the task it waits for.
func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let result = Locked<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    let work: @Sendable () async -> Void = {
        let outcome: Result<T, any Error>
        do { outcome = .success(try await body()) } catch { outcome = .failure(error) }
        result.withLock { $0 = outcome }
        done.signal()
    }
    if #available(macOS 15.0, iOS 18.0, *) {
        Task(executorPreference: KeyImportExecutor.shared, operation: work)
    } else {
        Task(operation: work)
    }
    done.wait()
    return try result.withLock { $0! }.get()
}

/// A task executor on one serial Dispatch queue, for ``blocking(_:)``.
@available(macOS 15.0, iOS 18.0, *)
final class KeyImportExecutor: TaskExecutor {
    static let shared = KeyImportExecutor()
    private let queue = DispatchQueue(label: "ferry-jwt-keys")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

extension KeyImportError: CustomStringConvertible {
    var description: String { "auth.jwt_providers: \(reason)" }
}
