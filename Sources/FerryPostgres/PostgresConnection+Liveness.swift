import CLibPQ
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension PostgresConnection {
    /// Whether an idle connection can still be used, checked without a round trip.
    ///
    /// An idle session should have nothing to read. If the socket is readable, the server
    /// sent something unprompted, usually a FATAL "terminating connection" before closing
    /// (restart, `pg_terminate_backend`, idle timeout); libpq then reports the connection
    /// bad once the input is consumed. After `roundTripAfter` of idleness a silent network
    /// loss is possible too, so an empty query confirms the server still answers.
    func isUsableAfterIdle(roundTripAfter: Duration) -> Bool {
        guard let handle, !isBroken else { return false }
        // A FATAL message and the end of the stream can arrive in separate reads, so keep
        // consuming while the socket stays readable (bounded, in case of a notification flood).
        for _ in 0..<4 {
            var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, 0)
            if ready < 0 { return false }
            if ready == 0 { break }
            if PQconsumeInput(handle) == 0 || isBroken { return false }
            while let notification = PQnotifies(handle) { PQfreemem(notification) }
            if PQisBusy(handle) != 0 { return false }
        }
        guard ContinuousClock.now - idleSince >= roundTripAfter else { return true }
        do { try execute("") } catch { return false }
        return !isBroken
    }

    /// Readies a connection that a borrower hands back: no open transaction, no pipeline,
    /// nothing in flight. Returns false when it must be discarded instead.
    func resetForReuse() -> Bool {
        guard let handle, !isBroken else { return false }
        if PQpipelineStatus(handle) != PQ_PIPELINE_OFF || PQisBusy(handle) != 0 { return false }
        rollbackIfNeeded()
        idleSince = .now
        return !isBroken
    }
}
