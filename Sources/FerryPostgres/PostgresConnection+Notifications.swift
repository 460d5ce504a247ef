// LISTEN/NOTIFY on one connection: `listen(_:)` subscribes it to channels,
// `notifications(waitingUpTo:wakeDescriptor:)` waits on its socket (and on an
// optional descriptor of the caller's, so that another thread can interrupt
// the wait) and returns what arrived as `PostgresNotification`s.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CLibPQ

/// One `NOTIFY` the connection received.
public struct PostgresNotification: Sendable, Equatable {
    /// The channel it was sent on.
    public let channel: String
    /// Its payload; empty when the sender gave none.
    public let payload: String
    /// The backend process that sent it.
    public let senderPID: Int32

    public init(channel: String, payload: String, senderPID: Int32) {
        self.channel = channel
        self.payload = payload
        self.senderPID = senderPID
    }
}

extension PostgresConnection {
    /// Subscribes this session to `channels` (`LISTEN`). A session that
    /// listens should do nothing else that waits on results for long: the
    /// server queues notifications for it until it reads them.
    ///
    /// - Throws: `PostgresError`; a channel name is an identifier, quoted here.
    public func listen(_ channels: [String]) throws(PostgresError) {
        let script = channels.map { channel in
            "LISTEN \"" + channel.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
        }.joined(separator: "; ")
        try execute(script)
    }

    /// Waits up to `seconds` for notifications and returns those that have
    /// arrived (at once when some are already buffered). Returns early, with
    /// what there is (possibly nothing), when `wakeDescriptor` becomes
    /// readable; the caller drains it.
    ///
    /// - Throws: `PostgresError` of kind `.connection` when the session is
    ///   gone (a restart, `pg_terminate_backend`, a network failure): the
    ///   caller reconnects and listens again.
    public func notifications(waitingUpTo seconds: Double, wakeDescriptor: Int32? = nil) throws(PostgresError) -> [PostgresNotification] {
        let handle = try liveHandle()
        var received = drainNotifications(handle)
        guard received.isEmpty else { return received }
        let socket = PQsocket(handle)
        guard socket >= 0 else { throw noting(PostgresError(kind: .connection, message: "the connection has no socket")) }
        var descriptors = [pollfd(fd: socket, events: Int16(POLLIN), revents: 0)]
        if let wakeDescriptor { descriptors.append(pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0)) }
        let millis = Int32(max(0, min(seconds, 3_600)) * 1000)
        let ready = poll(&descriptors, nfds_t(descriptors.count), millis)
        if ready < 0 && errno != EINTR {
            throw noting(PostgresError(kind: .connection, message: "poll on the connection failed: errno \(errno)"))
        }
        if descriptors[0].revents != 0 {
            guard PQconsumeInput(handle) != 0, !isBroken else {
                let message = PostgresError.from(connection: handle, fallback: "the connection was lost while listening").message
                throw noting(PostgresError(kind: .connection, message: message))
            }
            received = drainNotifications(handle)
        }
        return received
    }

    private func drainNotifications(_ handle: OpaquePointer) -> [PostgresNotification] {
        var received: [PostgresNotification] = []
        while let notification = PQnotifies(handle) {
            let value = notification.pointee
            received.append(
                PostgresNotification(
                    channel: value.relname.map { String(cString: $0) } ?? "",
                    payload: value.extra.map { String(cString: $0) } ?? "",
                    senderPID: value.be_pid))
            PQfreemem(notification)
        }
        return received
    }
}
