import Dispatch
import FerryPostgres
import Logging

// Ferry's way into PostgreSQL: one pipelined round trip per request as the
// caller, and the caller's transaction held open across round trips for the
// requests that need one. The statements it runs are `PlannedStatement`s with
// typed binds (SQL/PlannedStatement.swift), the one statement type of
// Ferry's own code.

/// The one door through which a request's statements reach PostgreSQL, run
/// as the caller under Row Level Security: every request is one pipelined
/// transaction, or joins its caller's open one. Not FerryPostgres's: it sits
/// on that module's ``PostgresPool`` and adds the caller.
///
/// `asCaller` puts the token check (``tokenCheck``) first in the pipeline, so
/// the token check, the caller's identity for Row Level Security, the action's
/// statements and the commit travel in one round trip. A bad token raises
/// inside that transaction, which aborts everything after it. A token checked
/// within `auth.token_cache_seconds` (``TokenCache``) is not looked up again:
/// its pipeline starts with ``callerSetting`` instead.
///
/// A JWT is verified here, before its pipeline is sent (``JWTVerifier``); a
/// verified one starts its pipeline with ``externalSignIn``, which makes its
/// user on first sight and sets the claims, and is then cached until it
/// expires: later requests start with ``claimsSetting``, as cheap as a cached
/// Ferry token's ``callerSetting``.
public final class PostgresGateway: Sendable {
    /// The serve pool (the RLS-subject role). Private, so that a request's
    /// statements reach PostgreSQL only through this type; start-up and
    /// operations (the catalog, the purger, `/metrics`) use ``FerryApp/pool``.
    private let pool: PostgresPool
    /// How many times a transaction that lost a serialization or deadlock race is rerun.
    public let maxRetries: Int
    /// Tokens checked within the last `auth.token_cache_seconds`; nil when that is 0.
    let tokens: TokenCache?
    /// When each token was last checked, until the next flush writes it (``TokenUseLog``).
    let tokenUses = TokenUseLog()
    /// When each JWT user last made a request, until the next flush writes it (core 0029).
    let userUses = TokenUseLog(key: "user")
    /// Whether Ferry's own tokens are accepted (`auth.builtin_tokens`).
    let builtinTokens: Bool
    /// The JWT verifier; nil when no provider is configured.
    let jwt: JWTVerifier?
    /// JWTs verified, each until it expires, its key is withdrawn, or its key set passes its grace.
    let jwts: TokenCache
    /// Where the hints of a committed write go (core 0028): nil, and writes
    /// notify inside their transaction as the triggers of 0017 did. A closure,
    /// not the live feed's `HintOutbox` itself: Sync comes after Execution
    /// (docs/ARCHITECTURE.md, "One direction"). Called once after the commit
    /// of a write's pipeline or of a caller transaction, never for a read's,
    /// with the hints Ferry made of the rows its statements returned
    /// (``RowHints``) and the text its triggers collected (one a line, or '').
    let hints: (@Sendable (_ made: [ChangeHint], _ collected: String) -> Void)?

    /// A gateway over `pool`, keeping checked tokens for `tokenCacheSeconds` (0: never),
    /// accepting Ferry's tokens when `builtinTokens` and JWTs when `jwt` is set.
    public convenience init(
        pool: PostgresPool, maxRetries: Int = 3, tokenCacheSeconds: Int = 0, builtinTokens: Bool = true, jwt: JWTVerifier? = nil
    ) {
        self.init(pool: pool, maxRetries: maxRetries, tokenCacheSeconds: tokenCacheSeconds, builtinTokens: builtinTokens, jwt: jwt, hints: nil)
    }

    /// The same, with the hints of committed writes handed to `hints`.
    init(
        pool: PostgresPool, maxRetries: Int = 3, tokenCacheSeconds: Int = 0, builtinTokens: Bool = true, jwt: JWTVerifier? = nil,
        hints: (@Sendable (_ made: [ChangeHint], _ collected: String) -> Void)?
    ) {
        self.pool = pool
        self.hints = hints
        self.maxRetries = maxRetries
        tokens = TokenCache(seconds: tokenCacheSeconds)
        self.builtinTokens = builtinTokens
        self.jwt = jwt
        let jwts = TokenCache(seconds: 86_400)!
        self.jwts = jwts
        // A withdrawn key ends the cache entries of the tokens it verified at once.
        jwt?.onWithdrawn { withdrawn in jwts.evict(keys: Set(withdrawn)) }
    }

    /// Runs `statements` as `caller`, in one transaction and one round trip.
    /// Returns the statements' results (the token check's own result is
    /// dropped), and records the user in the caller's trace.
    /// When the caller has a ``CallerTransaction`` open (a batch, an idempotent
    /// write) the statements join it instead, one round trip each.
    ///
    /// `writes`: the statements may write synced rows. Their hints are then
    /// collected in the transaction (core 0028), read by one more statement
    /// at the end of the same pipeline, and published after the commit
    /// (the live feed's `HintOutbox`), so that the commit does not NOTIFY. A write sent with
    /// `writes` false still wakes everyone: its triggers notify as before.
    func asCaller(_ caller: Caller, _ statements: [PlannedStatement], writes: Bool = false) throws -> [PostgresResult] {
        if let transaction = caller.transaction {
            guard transaction.credential == caller.credential else { throw Problem.unauthorized("one transaction, one caller") }
            // A read of public rows (core 0025) inside a batch's transaction turns them on
            // around its own statements only: the writes after it never see them.
            guard caller.readsPublic && !statements.isEmpty else { return try transaction.run(statements) }
            return Array(try transaction.run([Self.publicReadsOn] + statements + [Self.publicReadsOff]).dropFirst().dropLast())
        }
        let opening = try opening(caller.credential)
        let hints = writes ? self.hints : nil
        var first = hints == nil ? opening.statement : Self.collectingHints(opening.statement)
        // A request's own transaction holds its statements only, so a read of public rows turns
        // them on in its first statement and leaves them on until the commit ends the setting:
        // two statements fewer than the batch's wrap (a GET of a schema with public rows ran 4
        // statements for 2: bench/api/README.md, "GET's rise since c06df5f").
        if caller.readsPublic { first = Self.readingPublic(first) }
        var results = try run(first, statements + (hints == nil ? [] : [Self.hintsRead]))
        // Committed: the pipeline's implicit transaction ended at its sync point. The
        // hints it collected, and those Ferry makes of the rows its statements returned.
        // The setting is NULL in a session where nothing ever collected (only marked rows).
        if let hints, let read = results.popLast() {
            hints(RowHints.made(by: statements, results.dropFirst()), read.first?["hints"] ?? "")
        }
        // For the request log line.
        caller.trace?.userID = opening.knownUser ?? opening.learn(results.first?.first?["opened"])
        return Array(results.dropFirst())
    }

    /// `opening` also turns public rows on for the transaction (core 0025), as ``collectingHints`` adds its setting.
    static func readingPublic(_ opening: PostgresStatement) -> PostgresStatement {
        PostgresStatement(opening.sql + ", " + TransactionSetting.publicReads.set("'on'"), opening.params)
    }

    /// `opening` also asks the sync triggers to collect their hints instead of notifying (core 0028).
    /// Every opening is one `SELECT` of values without a `FROM`: one more value changes no result.
    static func collectingHints(_ opening: PostgresStatement) -> PostgresStatement {
        PostgresStatement(opening.sql + ", " + TransactionSetting.hintMode.set("'collect'"), opening.params)
    }

    /// The hints the transaction collected, one a line ('' for none).
    static let hintsRead = PlannedStatement("SELECT " + TransactionSetting.hints.current(missingOK: true) + " AS hints")

    /// Public rows (`ferry.sync_public`) are readable in this transaction from here on.
    static let publicReadsOn = PlannedStatement("SELECT " + TransactionSetting.publicReads.set("'on'"))
    /// ... and no longer.
    static let publicReadsOff = PlannedStatement("SELECT " + TransactionSetting.publicReads.set("'off'"))

    /// The first statement of a caller's transaction, and what its result teaches the caches.
    struct Opening: Sendable {
        let statement: PostgresStatement
        /// The user, when a cache vouched for the bearer and the statement only sets it.
        let knownUser: String?
        /// Keeps what the statement returned, once its transaction has committed, and gives the user id.
        let learn: @Sendable (String?) -> String?
    }

    /// Whether `credential` is a token this process verified and still holds
    /// (a cached Ferry token or JWT): the workers serve those first
    /// (``FerryApp/serverConfiguration``). Never reaches the database.
    func holdsVerified(_ credential: Credential?) -> Bool {
        switch credential {
        case .token(let hash)?: return builtinTokens && tokens?.user(for: hash) != nil
        case .jwt(let hash, _)?: return jwt != nil && jwts.entry(for: hash) != nil
        default: return false
        }
    }

    /// How a transaction for `credential` starts: the cached identity, a token
    /// lookup, or (for a JWT, verified here) the external sign-in.
    func opening(_ credential: Credential) throws -> Opening {
        switch credential {
        case .token(let hash):
            guard builtinTokens else { throw Problem.unauthorized() }
            if let tokens, let user = tokens.user(for: hash) {
                return Opening(statement: Self.callerSetting(user), knownUser: user) { _ in user }
            }
            // Read before the check is sent: a revocation through this process while it
            // runs must keep what the check saw out of the cache.
            let generation = tokens?.generation
            return Opening(statement: Self.tokenCheck(hash), knownUser: nil) { [tokens, self] text in
                guard let checked = text.flatMap(CheckedToken.init) else { return nil }
                note(hash, in: tokenUses)
                if let tokens, let generation {
                    tokens.store(hash, userID: checked.userID, expiresAtMs: checked.expiresAtMs, generation: generation)
                }
                return checked.userID
            }
        case .jwt(let hash, let token):
            guard let jwt else { throw Problem.unauthorized() }
            if let entry = jwts.entry(for: hash) {
                note(entry.userID, in: userUses)
                return Opening(statement: Self.claimsSetting(entry.userID, entry.claims ?? "{}"), knownUser: entry.userID) { _ in
                    entry.userID
                }
            }
            let nowMs = TokenCache.wallClockMs()
            // Read before verifying: a key withdrawn while this runs must keep its verification out of the cache.
            let generation = jwts.generation
            let verified: VerifiedJWT
            do {
                verified = try jwt.verify(token, now: Double(nowMs) / 1000)
            } catch let refusal as JWTRefusal {
                throw refusal.problem
            }
            let expires = ContinuousClock.now + .milliseconds(max(0, verified.acceptedUntilMs - nowMs))
            let until = verified.keysTrustedUntil.map { min(expires, $0) } ?? expires
            return Opening(statement: Self.externalSignIn(verified), knownUser: nil) { [jwts, self] user in
                guard let user else { return nil }
                note(user, in: userUses)
                jwts.store(
                    hash, userID: user, expiresAtMs: verified.acceptedUntilMs, claims: verified.claims,
                    key: verified.keyIdentity, generation: generation, until: until)
                return user
            }
        }
    }

    /// The user a recently checked credential belongs to, without a lookup; nil when not cached.
    func cachedUser(_ credential: Credential) -> String? {
        switch credential {
        case .token(let hash): tokens?.user(for: hash)
        case .jwt(let hash, _): jwts.entry(for: hash)?.userID
        }
    }

    /// Forgets every cached check of `userID`'s tokens and JWTs (the user was
    /// disabled, or all their tokens revoked), so their next request is checked
    /// again: a JWT's by `ferry.sign_in_external`, which refuses a disabled user.
    func forgetUser(_ userID: String) {
        tokens?.evict(userID: userID)
        jwts.evict(userID: userID)
    }

    /// Notes a use of `key` (a token's hash, a JWT user's id) in `log`, and
    /// schedules the flush that writes it when none is scheduled.
    private func note(_ key: String, in log: TokenUseLog) {
        guard log.note(key) else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(TokenUseLog.flushDelayMs)) { [self] in flushUses() }
    }

    /// Writes the token and JWT user uses noted since the last flush
    /// (``TokenUseLog``), on a connection that is idle now: a flush never opens
    /// one, nor makes a request wait. With none idle it tries again after the
    /// delay. A failure loses the uses: the next use of each notes it again.
    func flushUses() {
        let ran: Bool? = try? pool.withIdleConnection { connection in
            // Both taken first, each written on its own: a failure of one loses only its own uses.
            let (tokens, users) = (tokenUses.take(), userUses.take())
            if let tokens { _ = try? connection.run("SELECT ferry.record_token_uses(\(bind: .json(tokens))::jsonb)" as SQLQuery) }
            if let users { _ = try? connection.run("SELECT ferry.record_user_uses(\(bind: .json(users))::jsonb)" as SQLQuery) }
            return true
        }
        guard ran == nil else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(TokenUseLog.flushDelayMs)) { [self] in flushUses() }
    }

    /// Forgets a token revoked through this process, so its next use is checked again.
    func forgetToken(_ tokenHash: String) {
        tokens?.evict(tokenHash)
    }

    /// The statement that starts a caller's transaction unless the token was
    /// checked lately: it finds the live token with this hash, sets
    /// `ferry.user_id` (which Row Level Security reads) for the transaction and
    /// returns the user id and the token's expiry (ms since the epoch) as one text,
    /// `"<user id> <expiry>"` (``CheckedToken``); with no live token it raises
    /// FR401, which aborts the transaction before any other statement runs. A plain
    /// statement rather than a plpgsql function (the former `ferry.begin_request`):
    /// inside a function the lookup went through SPI and cost PostgreSQL measurably
    /// more per GET (migrations 0009, 0010 and 0012; see bench/api/README.md).
    ///
    /// Every opening returns what it learned as its column `opened`.
    static func tokenCheck(_ tokenHash: String) -> PostgresStatement {
        PostgresStatement(tokenCheckText, [tokenHash])
    }

    /// The openings' texts are made once, by ``SQLQuery`` (every request sends
    /// one: a text made per request would cost every GET its allocation and
    /// copy); each template's ``parameter``s take the request's values in order.
    private static let parameter = Bind.null

    private static let tokenCheckText = tokenCheckTemplate.sql
    private static let tokenCheckTemplate: SQLQuery = """
        SELECT COALESCE((SELECT pg_catalog.set_config('ferry.user_id', v.user_id::pg_catalog.text, true) \
        || ' ' || floor(extract(epoch FROM v.expires_at) * 1000)::pg_catalog.int8::pg_catalog.text \
        FROM ferry.live_tokens v WHERE v.token_hash = \(bind: parameter)::pg_catalog.bytea), ferry.invalid_token()) AS opened
        """

    /// What starts a caller's transaction when ``TokenCache`` vouches for the
    /// token: `ferry.user_id` set for the transaction, no lookup.
    static func callerSetting(_ userID: String) -> PostgresStatement {
        PostgresStatement(callerSettingText, [userID])
    }

    private static let callerSettingText =
        ("SELECT pg_catalog.set_config('ferry.user_id', \(bind: parameter), true) AS opened" as SQLQuery).sql

    /// What starts the transaction of a JWT verified lately: the user and the
    /// claims (`ferry.claims()`) set for the transaction, nothing looked up.
    static func claimsSetting(_ userID: String, _ claims: String) -> PostgresStatement {
        ("""
        SELECT pg_catalog.set_config('ferry.user_id', \(bind: userID), true) AS opened,
               pg_catalog.set_config('ferry.claims', \(bind: claims), true) AS claims
        """ as SQLQuery).statement.postgres
    }

    /// What starts the transaction of a JWT just verified: its user made on
    /// first sight (migration 0016), its lookup name kept when it changed
    /// (0029), the user and claims set; returns the user id.
    static func externalSignIn(_ verified: VerifiedJWT) -> PostgresStatement {
        ("""
        SELECT ferry.sign_in_external(\(bind: verified.issuer), \(bind: verified.subject), \(bind: verified.claims),
                                      \(bind: verified.lookupName.map { .text($0) } ?? .null)) AS opened
        """ as SQLQuery).statement.postgres
    }

    /// Runs `statements` with no caller identity (sign-in, sign-up), in one transaction;
    /// `answerLimit` tightens the pool's answer timeout (a health probe's).
    func anonymous(_ statements: [PlannedStatement], answerLimit: Duration? = nil) throws -> [PostgresResult] {
        try run(nil, statements, answerLimit: answerLimit)
    }

    /// How long a health probe (`/readyz`, `/metrics`) waits for each of PostgreSQL's
    /// answers, and to connect. With the pool's acquire timeout (2 s by default) a probe
    /// usually answers within 4 s, inside the 5 s a Docker health check allows
    /// (deploy/Dockerfile), also while PostgreSQL is frozen rather than down: to a probe,
    /// a server that does not answer is down.
    static let probeAnswerLimit: Duration = .seconds(2)

    /// ``anonymous(_:)`` if a connection is free now, nil when every one is in use: for a
    /// question asked while the asker holds a pooled connection already, which must never
    /// wait for a second (requests doing the same would hold every slot and wait each other out).
    func anonymousIfFree(_ statements: [PlannedStatement]) throws -> [PostgresResult]? {
        let wire = statements.map(\.postgres)
        return try pool.withFreeConnection { connection in try connection.pipeline(wire, transaction: false) }
    }

    /// Runs `first` (the caller's, when there is one) and `statements` as one
    /// pipeline; errors are mapped with indexes into `statements`.
    private func run(_ first: PostgresStatement?, _ statements: [PlannedStatement], answerLimit: Duration? = nil) throws -> [PostgresResult] {
        let offset = first == nil ? 0 : 1
        var wire: [PostgresStatement] = []
        wire.reserveCapacity(statements.count + offset)
        if let first { wire.append(first) }
        for statement in statements { wire.append(statement.postgres) }
        var attempt = 0
        while true {
            do {
                // No BEGIN/COMMIT: everything up to the pipeline's sync point is already one
                // implicit transaction; BEGIN and COMMIT would be two more statements to run.
                return try pool.withConnection(answerLimit: answerLimit) { connection in
                    try connection.pipeline(wire, transaction: false)
                }
            } catch let error as PostgresError {
                if error.isRetryableConflict, attempt < maxRetries {
                    attempt += 1
                    continue
                }
                throw DatabaseFailure.map(error, statementOffset: offset)
            }
        }
    }
}

extension PostgresError {
    /// A serialization failure or deadlock: the transaction lost a race and may simply run again.
    var isRetryableConflict: Bool { sqlState == "40001" || sqlState == "40P01" }
}

extension PostgresGateway {
    /// Runs `body` in one transaction as `caller`, on one pooled connection.
    /// `body` gets the transaction, and hands it on (in its ``RequestScope``)
    /// to whatever it runs, so that every `asCaller` inside joins it.
    ///
    /// `body` decides whether to commit. A transaction in which a statement
    /// failed is never committed, whatever `body` says. When a statement lost
    /// a serialization or deadlock race, `body` runs again from the start (up
    /// to ``maxRetries`` times), so it must have no effects outside the database.
    /// When the caller has a transaction open already, `body` simply joins it
    /// (the outermost owner commits).
    func callerTransaction<T>(_ caller: Caller, _ body: (CallerTransaction) throws -> TransactionOutcome<T>) throws -> T {
        if let current = caller.transaction {
            switch try body(current) {
            case .commit(let value), .rollback(let value): return value
            }
        }
        // Verified before a connection is taken: a JWT's keys may have to be fetched.
        let opening = try opening(caller.credential)
        var attempt = 0
        while true {
            var retry = false
            var opened: String?
            let value: T? = try withMappedConnection { connection in
                do throws(PostgresError) {
                    try connection.execute("BEGIN")
                    let statement = hints == nil ? opening.statement : Self.collectingHints(opening.statement)
                    opened = try connection.query(statement.sql, statement.params).first?["opened"]
                } catch {
                    throw DatabaseFailure.map(error, statementOffset: 0)
                }
                let transaction = CallerTransaction(connection: connection, credential: caller.credential)
                // The pool rolls back a transaction left open, also when `body` throws.
                let outcome = try body(transaction)
                if transaction.sawRetryableConflict, attempt < maxRetries {
                    retry = true
                    try? connection.execute("ROLLBACK")
                    return nil
                }
                switch outcome {
                case .commit(let value) where !transaction.failed:
                    do {
                        // NULL in a session where nothing ever collected (only marked rows): none.
                        let collected = try hints.map { _ in try connection.query(Self.hintsRead.sql).first?["hints"] ?? "" }
                        let commit = try connection.query("COMMIT")
                        if commit.commandTag == "ROLLBACK" {
                            throw Problem(500, .internalError, "the transaction was rolled back at commit")
                        }
                        if let collected { hints?(transaction.rowHints, collected) }
                        // Only now: a JWT's first sight made its user in this transaction.
                        if opening.knownUser == nil { _ = opening.learn(opened) }
                    } catch let error as PostgresError {
                        if error.isRetryableConflict, attempt < maxRetries {
                            retry = true
                            return nil
                        }
                        throw DatabaseFailure.map(error, statementOffset: 0)
                    }
                    return value
                case .commit(let value), .rollback(let value):
                    try? connection.execute("ROLLBACK")
                    return value
                }
            }
            if retry {
                attempt += 1
                continue
            }
            if let value { return value }
        }
    }

    /// A pooled connection for `body`, with a failure of the pool itself (no
    /// connection to be had while PostgreSQL is down, or none free in time)
    /// mapped like any other database failure: a 503, not an unmapped error and
    /// a 500. What `body` throws was mapped already, and mapping is idempotent.
    func withMappedConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        do {
            return try pool.withConnection(body)
        } catch let error as PostgresError {
            throw DatabaseFailure.map(error, statementOffset: 0)
        }
    }
}

/// What a transaction body decides: commit or roll back, and the answer either way.
enum TransactionOutcome<Value> {
    case commit(Value)
    case rollback(Value)
}
