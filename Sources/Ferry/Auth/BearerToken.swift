import Crypto
import FerryBase
import FerryHTTP
import Glibc

// Bearer tokens: reading one from `Authorization`, hashing it (only hashes are
// stored), base64url, and the cache of tokens checked lately.

/// Bearer tokens: 256 random bits, URL-safe base64, stored only as a SHA-256 hash.
public enum BearerToken {
    /// A new token from the system's cryptographic random source.
    public static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Base64URL.encode(bytes)
    }

    /// The hash the database stores, as a `bytea` text literal (`\x…`), so the
    /// token itself never reaches PostgreSQL or its logs.
    public static func hash(_ token: String) -> String {
        var token = token
        let digest = token.withUTF8 { SHA256.hash(data: UnsafeRawBufferPointer($0)) }
        // Runs on every authenticated request: one allocation (the result), no per-byte strings.
        return String(unsafeUninitializedCapacity: 2 + 2 * SHA256.byteCount) { out in
            out[0] = UInt8(ascii: "\\")
            out[1] = UInt8(ascii: "x")
            var at = 2
            digest.withUnsafeBytes { bytes in
                for byte in bytes {
                    out[at] = hexDigits[Int(byte >> 4)]
                    out[at + 1] = hexDigits[Int(byte & 0x0f)]
                    at += 2
                }
            }
            return at
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// The token of an `Authorization: Bearer <token>` header, or nil.
    /// The scheme is case-insensitive (RFC 9110 §11.1); the token must look
    /// like one Ferry issues, so junk never reaches the database.
    public static func from(_ request: HTTPRequest) -> String? {
        guard var value = request.headers["Authorization"] else { return nil }
        return value.withUTF8 { bytes -> String? in
            guard let token = bearer(bytes), isFerryToken(token) else { return nil }
            return String(decoding: token, as: UTF8.self)
        }
    }

    /// What the request's `Authorization: Bearer` carries: one of Ferry's
    /// tokens, a JWT (anything with a dot, so that a malformed one gets its
    /// reason), or nil for neither.
    package static func credential(_ request: HTTPRequest) -> Credential? {
        guard var value = request.headers["Authorization"] else { return nil }
        return value.withUTF8 { bytes -> Credential? in
            guard let token = bearer(bytes) else { return nil }
            if token.contains(UInt8(ascii: ".")) {
                let text = String(decoding: token, as: UTF8.self)
                return .jwt(hash: hash(text), token: text)
            }
            guard isFerryToken(token) else { return nil }
            return .token(hash: hash(String(decoding: token, as: UTF8.self)))
        }
    }

    /// The bytes after `Bearer` and its whitespace, trailing whitespace
    /// dropped; nil for another scheme or an empty token. Byte-level on
    /// purpose: this runs on every authenticated request.
    private static func bearer(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8>? {
        var start = 0
        while start < bytes.count, bytes[start] == space { start += 1 }
        guard bytes.count - start > scheme.count else { return nil }
        for (offset, letter) in scheme.enumerated() where bytes[start + offset] | 0x20 != letter { return nil }
        start += scheme.count
        guard bytes[start] == space else { return nil }
        while start < bytes.count, isWhitespace(bytes[start]) { start += 1 }
        var end = bytes.count
        while end > start, isWhitespace(bytes[end - 1]) { end -= 1 }
        guard end > start else { return nil }
        return UnsafeBufferPointer(rebasing: bytes[start..<end])
    }

    /// Whether `token` could be one Ferry issued: 16 to 512 base64url characters.
    private static func isFerryToken(_ token: UnsafeBufferPointer<UInt8>) -> Bool {
        (16...512).contains(token.count) && token.allSatisfy(Base64URL.isAlphabet)
    }

    /// `bearer`, lowercase: compared against the header with ASCII letters folded.
    private static let scheme: [UInt8] = Array("bearer".utf8)
    private static let space = UInt8(ascii: " ")

    private static func isWhitespace(_ byte: UInt8) -> Bool { byte == space || byte == UInt8(ascii: "\t") }
}

/// URL-safe base64 without padding (RFC 4648 §5), for tokens that travel in
/// headers and query strings unescaped.
enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var i = 0
        while i + 2 < bytes.count {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)], alphabet[Int(n & 63)]]
            i += 3
        }
        let rest = bytes.count - i
        if rest == 1 {
            let n = UInt32(bytes[i]) << 16
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)]]
        } else if rest == 2 {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)]]
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func isAlphabet(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a) || (byte >= 0x30 && byte <= 0x39)
            || byte == 0x2d || byte == 0x5f
    }
}

extension Base64URL {
    /// Decodes unpadded URL-safe base64; nil for any other character or an
    /// impossible length. Strict: the unused low bits of the last character must be
    /// zero, so every byte string has exactly one accepted spelling.
    static func decode(_ text: String) -> [UInt8]? {
        let input = Array(text.utf8)
        if input.count % 4 == 1 { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(input.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for byte in input {
            guard let value = sextet(byte) else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(accumulator >> UInt32(bits) & 0xff))
            }
        }
        if bits > 0, accumulator & ((1 << UInt32(bits)) - 1) != 0 { return nil }
        return out
    }

    private static func sextet(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x41...0x5a: byte - 0x41
        case 0x61...0x7a: byte - 0x61 + 26
        case 0x30...0x39: byte - 0x30 + 52
        case 0x2d: 62
        case 0x5f: 63
        default: nil
        }
    }
}

/// Tokens this process checked against the database within the last
/// `auth.token_cache_seconds`, by hash, with the user each one names and when it
/// expires.
///
/// A request whose token is here starts its pipeline with `set_config` alone
/// instead of the token lookup (`Database.asCaller`): the lookup was a large
/// share of PostgreSQL's CPU in a GET by id. What that costs: a token revoked
/// anywhere but through this process (`DELETE /v1/auth/token` on another
/// instance, SQL by hand, a deleted user) is still accepted here for up to the
/// cache's lifetime. A revocation through this process is evicted at once, and
/// an expired token is refused at its expiry whatever the cache holds.
///
/// Only successful checks are stored, so a wrong token always reaches the
/// database (and its throttling). Keys are token hashes: the process never keeps
/// a token itself.
///
/// Verified JWTs have a cache of their own (``Database``), whose entries also
/// hold the token's claims and last until the token expires: a JWT cannot be
/// revoked, so its verification stands for its lifetime. There the claims'
/// bytes are bounded too.
final class TokenCache: Sendable {
    /// One checked token.
    struct Entry: Sendable {
        /// The user the token names (what `ferry.user_id` is set to).
        let userID: String
        /// When the token expires, in ms since the Unix epoch.
        let expiresAtMs: Int64
        /// Until when this check stands in for the database's.
        let checkedUntil: ContinuousClock.Instant
        /// A JWT's claims, as JSON text (what `ferry.claims()` returns); nil for Ferry's tokens.
        var claims: String? = nil
    }

    private struct State {
        var entries: [String: Entry] = [:]
        /// Bumped by every eviction, so that a check which began before a
        /// revocation through this process cannot store what it saw afterwards.
        var generation: UInt64 = 0
        /// When lapsed entries are next swept out.
        var nextSweep: ContinuousClock.Instant?
        /// The bytes of the claims held.
        var claimBytes = 0
    }

    private let state = Locked(State())
    /// How long a check stands in for the database's.
    let lifetime: Duration
    /// At most this many tokens are held; past it, lapsed entries go and, if
    /// that is not enough, all of them (the next check of each refills it).
    let capacity: Int
    /// At most this many bytes of claims are held, treated like ``capacity``.
    let maxClaimBytes: Int

    /// A cache whose checks stand for `seconds`; nil for 0, which disables it.
    init?(seconds: Int, capacity: Int = 100_000, maxClaimBytes: Int = 64 << 20) {
        guard seconds > 0 else { return nil }
        lifetime = .seconds(seconds)
        self.capacity = max(1, capacity)
        self.maxClaimBytes = maxClaimBytes
    }

    /// The user `hash` was checked for, while the check is recent and the token unexpired.
    func user(for hash: String, now: ContinuousClock.Instant = .now, nowMs: Int64 = TokenCache.wallClockMs()) -> String? {
        entry(for: hash, now: now, nowMs: nowMs)?.userID
    }

    /// What `hash` was checked for, while the check is recent and the token unexpired.
    func entry(for hash: String, now: ContinuousClock.Instant = .now, nowMs: Int64 = TokenCache.wallClockMs()) -> Entry? {
        state.withLock { state in
            guard let entry = state.entries[hash] else { return nil }
            guard now < entry.checkedUntil, nowMs < entry.expiresAtMs else {
                state.claimBytes -= entry.claims?.utf8.count ?? 0
                state.entries[hash] = nil
                return nil
            }
            return entry
        }
    }

    /// The eviction count; read it before sending a check whose result ``store`` may keep.
    var generation: UInt64 { state.withLock { $0.generation } }

    /// Keeps a successful check, unless a token was evicted since `generation` was read.
    func store(
        _ hash: String, userID: String, expiresAtMs: Int64, claims: String? = nil, generation: UInt64,
        now: ContinuousClock.Instant = .now, until: ContinuousClock.Instant? = nil
    ) {
        let checkedUntil = until.map { min($0, now + lifetime) } ?? now + lifetime
        let entry = Entry(userID: userID, expiresAtMs: expiresAtMs, checkedUntil: checkedUntil, claims: claims)
        let bytes = claims?.utf8.count ?? 0
        state.withLock { state in
            guard state.generation == generation else { return }
            // A token not used again (its app signed out, its user moved on)
            // would otherwise stay until the cache filled: sweep lapsed
            // entries once per lifetime, so the cache holds the tokens of the
            // last moments and memory follows the active users, not all users.
            if let next = state.nextSweep, now >= next {
                Self.sweep(&state, now: now)
                state.nextSweep = now + lifetime
            } else if state.nextSweep == nil {
                state.nextSweep = now + lifetime
            }
            let full = state.entries.count >= capacity || state.claimBytes + bytes > maxClaimBytes
            if full, state.entries[hash] == nil {
                Self.sweep(&state, now: now)
                if state.entries.count >= capacity || state.claimBytes + bytes > maxClaimBytes {
                    state.entries.removeAll(keepingCapacity: true)
                    state.claimBytes = 0
                }
            }
            state.claimBytes += bytes - (state.entries[hash]?.claims?.utf8.count ?? 0)
            state.entries[hash] = entry
        }
    }

    /// Drops the entries whose check has lapsed.
    private static func sweep(_ state: inout State, now: ContinuousClock.Instant) {
        state.entries = state.entries.filter { now < $0.value.checkedUntil }
        state.claimBytes = state.entries.values.reduce(0) { $0 + ($1.claims?.utf8.count ?? 0) }
    }

    /// Forgets `hash` (its token was revoked through this process).
    func evict(_ hash: String) {
        state.withLock { state in
            state.claimBytes -= state.entries[hash]?.claims?.utf8.count ?? 0
            state.entries[hash] = nil
            state.generation &+= 1
        }
    }

    /// How many tokens are held (for tests).
    var count: Int { state.withLock { $0.entries.count } }

    /// The wall clock in ms since the Unix epoch, the unit of a token's `expires_at`.
    static func wallClockMs() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec / 1_000_000)
    }
}

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
}

/// What the token check (`Database.tokenCheck`) returns for a live token:
/// `"<user id> <expiry in ms since the epoch>"`, one text so that the statement
/// keeps its single COALESCE that raises FR401 when no token matches.
struct CheckedToken: Equatable {
    /// The user the token names.
    let userID: String
    /// When the token expires, in ms since the Unix epoch.
    let expiresAtMs: Int64

    /// A checked token from its parts.
    init(userID: String, expiresAtMs: Int64) {
        self.userID = userID
        self.expiresAtMs = expiresAtMs
    }

    /// Reads the check's text; nil for anything else.
    init?(_ text: String) {
        guard let space = text.utf8.firstIndex(of: UInt8(ascii: " ")),
              let expiry = Int64(text[text.index(after: space)...]) else { return nil }
        let user = String(text[..<space])
        guard !user.isEmpty else { return nil }
        userID = user
        expiresAtMs = expiry
    }
}
