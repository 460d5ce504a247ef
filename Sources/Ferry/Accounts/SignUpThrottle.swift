import FerryBase
import FerryHTTP

/// Sign-ups refused because the name is taken, counted per client address: past
/// ``limit`` in ``window``, every sign-up from the address answers 429 until the oldest
/// refusal leaves the window (all of them: were a free name still served, a 201 against
/// a 429 would answer the guess). Sign-up must tell a person that a name is taken,
/// which makes it an oracle of which names exist; this keeps it no faster an oracle
/// than `/v1/users/lookup` (30 questions in 10 minutes). A person who meets a taken
/// name tries a few others, far from the limit.
///
/// In this process's memory: each instance counts its own, and behind a proxy the
/// address is the proxy's, so a guesser there holds up others' sign-ups too, for at
/// most the window.
final class SignUpThrottle: Sendable {
    static let limit = 30
    static let window: Double = 600
    /// Addresses remembered at most; past it the one with the oldest refusal goes.
    static let maxAddresses = 10_000

    private let refusals = Locked<[String: [Double]]>([:])

    /// Seconds until `remoteAddress` may sign up again; nil when it may now.
    func retryAfter(_ remoteAddress: String, now: Double = MonotonicClock.now()) -> Int? {
        let address = Self.host(remoteAddress)
        return refusals.withLock { refusals in
            guard var times = refusals[address] else { return nil }
            times.removeAll { now - $0 >= Self.window }
            refusals[address] = times.isEmpty ? nil : times
            guard times.count >= Self.limit, let oldest = times.first else { return nil }
            return max(1, Int((oldest + Self.window - now).rounded(.up)))
        }
    }

    /// Counts a sign-up from `remoteAddress` refused for a name that is taken.
    func refused(_ remoteAddress: String, now: Double = MonotonicClock.now()) {
        let address = Self.host(remoteAddress)
        refusals.withLock { refusals in
            refusals[address, default: []].append(now)
            if refusals.count > Self.maxAddresses,
                let stalest = refusals.min(by: { ($0.value.last ?? 0) < ($1.value.last ?? 0) })?.key
            {
                refusals[stalest] = nil
            }
        }
    }

    /// The address without its port: `ip:port` or `[ip]:port`.
    static func host(_ remoteAddress: String) -> String {
        guard let colon = remoteAddress.lastIndex(of: ":") else { return remoteAddress }
        return String(remoteAddress[..<colon])
    }
}
