import FerryPostgres

/// Many tokens checked in one statement: when one check's page answers the
/// waiters of many users on a stream (``StreamChecks``), each of them must
/// still hold a live token, as its own check would have made sure. Their
/// checks lapse from ``TokenCache`` a second after they were made (the
/// default `auth.token_cache_seconds`), long before a write wakes a waiter;
/// one lookup of all of them puts them back, where a lookup each would cost
/// what the shared page saves.
extension PostgresGateway {
    /// Most hashes one statement looks up.
    static let recheckBatch = 5_000

    /// Checks the tokens of `hashes` that the cache does not vouch for now,
    /// or will not for more than half its lifetime, storing the live ones in
    /// the cache as a request's check does; a revoked or expired token is
    /// simply not stored (its request's own check then refuses it). Nothing
    /// without a token cache. Taking the soon-lapsing ones too puts a
    /// stream's tokens on one clock: one lookup then serves them all for
    /// most of a lifetime, where lookups of only the lapsed ones would leave
    /// tokens lapsing one by one between two lookups, each making its waiter
    /// check alone (``StreamChecks``).
    /// - Returns: what it vouches for, each live token of `hashes` that the
    ///   cache vouched for or the lookup found (``TokenVouchers``), for the
    ///   checks of the feed that end within a lifetime of the lookup.
    @discardableResult
    func recheck(tokens hashes: [String]) throws -> TokenVouchers {
        guard builtinTokens, let tokens else { return .none }
        // Read before the lookup: a revocation through this process meanwhile keeps its result out.
        let generation = tokens.generation
        // Before the lookup, too: what it finds stands from here.
        let start = ContinuousClock.now
        let soon = start + tokens.lifetime / 2
        var vouchers: [String: TokenVouchers.Voucher] = [:]
        var unknown: [String] = []
        for hash in hashes {
            if let entry = tokens.entry(for: hash), entry.checkedUntil >= soon {
                vouchers[hash] = TokenVouchers.Voucher(user: entry.userID, until: entry.checkedUntil, expiresAtMs: entry.expiresAtMs)
            } else {
                unknown.append(hash)
            }
        }
        var batchStart = 0
        while batchStart < unknown.count {
            let batch = unknown[batchStart..<min(batchStart + Self.recheckBatch, unknown.count)]
            batchStart += Self.recheckBatch
            let result = try anonymous([Self.tokenLookup(Array(batch))])[0]
            let hashColumn = try result.column("hash", as: String.self), checkedColumn = try result.column("checked", as: String.self)
            for row in result.rows {
                guard let hash = try row.decode(hashColumn), let checked = try row.decode(checkedColumn).flatMap(CheckedToken.init) else {
                    continue
                }
                tokens.store(hash, userID: checked.userID, expiresAtMs: checked.expiresAtMs, generation: generation)
                vouchers[hash] = TokenVouchers.Voucher(user: checked.userID, until: start + tokens.lifetime, expiresAtMs: checked.expiresAtMs)
            }
        }
        return TokenVouchers(
            vouchers: vouchers, generation: generation, currentGeneration: { [tokens] in tokens.generation }, lookedUp: unknown.count)
    }

    /// The live tokens among `hashes` (each `\x` and hex, as ``BearerToken/hash(_:)`` spells
    /// them): hash, then user and expiry as ``CheckedToken`` reads them.
    static func tokenLookup(_ hashes: [String]) -> PlannedStatement {
        let query: SQLQuery = """
            SELECT '\\x' || pg_catalog.encode(v.token_hash, 'hex') AS hash,
                   v.user_id::pg_catalog.text || ' ' || floor(extract(epoch FROM v.expires_at) * 1000)::pg_catalog.int8::pg_catalog.text AS checked
              FROM ferry.live_tokens v
             WHERE v.token_hash = ANY (SELECT pg_catalog.decode(pg_catalog.substr(h, 3), 'hex')
                                         FROM pg_catalog.unnest(pg_catalog.string_to_array(\(bind: hashes.joined(separator: " ")), ' ')) h)
            """
        return query.statement
    }
}
