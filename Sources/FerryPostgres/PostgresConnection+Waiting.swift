// Waiting for the server, bounded. libpq's own waits (inside `PQexec`, `PQgetResult`,
// a blocking flush) have no limit, so a server that is frozen (SIGSTOP, a hung host) or
// cut off by a partition that keeps TCP up would hold the calling thread for ever. The
// connection is non-blocking instead, and every wait for room to send or for a result
// happens here, up to `answerTimeout`; past it the connection is given up as broken.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CLibPQ

extension PostgresConnection {
    /// Sends what libpq still holds and waits until the next result can be read without
    /// blocking, each within `answerTimeout` of the call.
    ///
    /// A connection lost meanwhile is not thrown here: `PQgetResult` then returns libpq's
    /// own error result (with its message) at once, as it did when libpq did the waiting.
    ///
    /// `statements` is how many statements may run before this result comes: PostgreSQL
    /// sends a pipeline's results only at its sync point (or when its output buffer fills),
    /// so the wait for the first may span every statement, each bounded by
    /// `statement_timeout`. The wait is `answerTimeout` for each.
    ///
    /// - Throws: `.connection` when the server took nothing and said nothing for
    ///   `answerTimeout` (times `statements`); the connection is marked broken, so a pool
    ///   discards it.
    func awaitResult(_ handle: OpaquePointer, statements: Int = 1) throws(PostgresError) {
        var deadline = WaitDeadline(limitMs: answerTimeoutMs.map { $0 * Int64(max(1, statements)) })
        while true {
            let flushed = PQflush(handle)
            if flushed <= 0 { break }
            // Room to send, or something to read: a server that is writing results may be
            // waiting for us to read before it reads more itself.
            let events = try waitForSocket(handle, events: Int16(POLLOUT | POLLIN), until: &deadline)
            if events & Int16(POLLIN) != 0, PQconsumeInput(handle) == 0 { return }
        }
        while PQisBusy(handle) != 0 {
            _ = try waitForSocket(handle, events: Int16(POLLIN), until: &deadline)
            if PQconsumeInput(handle) == 0 { return }
        }
    }

    /// The next result of what was sent, as `PQgetResult`, but waited for within
    /// `answerTimeout` for each of `statements` (``awaitResult(_:statements:)``); nil once
    /// the current command's results are all read.
    func nextResult(_ handle: OpaquePointer, statements: Int = 1) throws(PostgresError) -> OpaquePointer? {
        try awaitResult(handle, statements: statements)
        return PQgetResult(handle)
    }

    /// Reads every result of the one command just sent, as `PQexec` does for its caller:
    /// the first error when a statement failed, else the last result.
    func collectResults(_ handle: OpaquePointer) throws(PostgresError) -> PostgresResult {
        var last: OpaquePointer?
        defer { if let last { PQclear(last) } }
        var failure: PostgresError?
        while let result = try nextResult(handle) {
            switch PQresultStatus(result) {
            case PGRES_COPY_IN, PGRES_COPY_OUT, PGRES_COPY_BOTH:
                // Nothing more can be read in COPY mode; `outcome` marks the session broken.
                defer { PQclear(result) }
                _ = try outcome(of: result)
            case PGRES_FATAL_ERROR, PGRES_NONFATAL_ERROR:
                if failure == nil {
                    do throws(PostgresError) { _ = try outcome(of: result) } catch { failure = error }
                }
                PQclear(result)
            default:
                if let last { PQclear(last) }
                last = result
            }
            if PQstatus(handle) != CONNECTION_OK { break }
        }
        // A connection lost after a statement failed outranks that failure, as in a pipeline:
        // it decides what the caller does.
        if PQstatus(handle) != CONNECTION_OK, failure?.kind != .connection {
            throw noting(PostgresError.from(connection: handle, fallback: "the connection was lost"))
        }
        if let failure { throw failure }
        return try consume(last.take())
    }

    /// Polls the socket for `events` until one is ready or `deadline` passes.
    private func waitForSocket(
        _ handle: OpaquePointer, events: Int16, until deadline: inout WaitDeadline
    ) throws(PostgresError) -> Int16 {
        let socket = PQsocket(handle)
        // No socket: libpq reports the lost connection itself on the next call.
        guard socket >= 0 else { return events }
        // Bytes OpenSSL has decrypted but libpq has not taken (a TLS record larger than
        // libpq's free buffer) make no socket readable: read them first, as libpq's own
        // wait does (`pgtls_read_pending`), or the wait would last until the deadline.
        if events & Int16(POLLIN) != 0, Self.hasPendingTLSBytes(handle) { return Int16(POLLIN) }
        while true {
            guard let millis = deadline.pollMillis() else { throw givenUp() }
            var descriptor = pollfd(fd: socket, events: events, revents: 0)
            let ready = poll(&descriptor, 1, millis)
            if ready > 0 { return descriptor.revents }
            if ready < 0, errno != EINTR {
                throw noting(PostgresError(kind: .connection, message: "poll on the connection failed: errno \(errno)"))
            }
        }
    }

    /// Whether OpenSSL holds decrypted bytes of this connection that libpq has not read.
    /// `SSL_pending` is looked up in the process (libpq loaded libssl) rather than linked,
    /// so the build needs no OpenSSL headers; without it, or without TLS, false.
    private static func hasPendingTLSBytes(_ handle: OpaquePointer) -> Bool {
        guard PQsslInUse(handle) != 0, let pending = sslPending, let ssl = PQsslStruct(handle, "OpenSSL") else { return false }
        return unsafeBitCast(pending.raw, to: (@convention(c) (UnsafeMutableRawPointer?) -> Int32).self)(ssl) > 0
    }

    /// `SSL_pending`, found once among the symbols the process has loaded.
    private static let sslPending: SendablePointer? = {
        guard let process = dlopen(nil, RTLD_NOW), let symbol = dlsym(process, "SSL_pending") else { return nil }
        return SendablePointer(symbol)
    }()

    /// The error for a server that did not answer in time; the session's state is now
    /// unknown (a statement may still run, or have committed), so it is never used again.
    private func givenUp() -> PostgresError {
        sawFatalError = true
        let limit = answerTimeout.map { " within \($0)" } ?? ""
        return PostgresError(
            kind: .connection, message: "PostgreSQL did not answer\(limit); the connection was given up")
    }
}

/// When a wait for the server gives up. The clock is read only once a wait must poll:
/// most of a pipeline's results are at hand when asked for, and reading a clock for each
/// was a visible share of a request's instructions.
struct WaitDeadline {
    /// The limit in milliseconds; nil for none.
    let limitMs: Int64?
    /// CLOCK_MONOTONIC milliseconds at which the wait ends, from its first poll on.
    private var endMs: Int64?

    init(limitMs: Int64?) { self.limitMs = limitMs }

    /// How long the next poll may wait: -1 without a limit; nil once the limit has passed.
    mutating func pollMillis() -> Int32? {
        guard let limitMs else { return -1 }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let nowMs = Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
        let end = endMs ?? nowMs + limitMs
        endMs = end
        guard end > nowMs else { return nil }
        return Int32(clamping: end - nowMs)
    }
}

/// A function's address: immutable, and callable from any thread.
private struct SendablePointer: @unchecked Sendable {
    // @unchecked: a raw pointer is not Sendable, but this one is a C function's
    // address, fixed for the life of the process and never written through.
    let raw: UnsafeMutableRawPointer
    init(_ raw: UnsafeMutableRawPointer) { self.raw = raw }
}

extension Optional {
    /// The value, leaving nil behind: ownership handed from one holder to the next.
    fileprivate mutating func take() -> Wrapped? {
        defer { self = nil }
        return self
    }
}
