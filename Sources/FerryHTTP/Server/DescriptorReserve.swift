import CEpoll
import Glibc
import FerryBase
import Synchronization

/// What lets a server out of descriptors (EMFILE) refuse new connections
/// cleanly instead of leaving them in the listen backlog: one spare
/// descriptor, given up to accept-and-close a pending connection and taken
/// back at once.
///
/// Every accept of every loop goes through the same lock as the shedding.
/// Otherwise another loop's accept can take the descriptor the reserve just
/// freed; the reserve is then lost, nothing can be shed, and the backlog's
/// clients hang until some connection closes. A reserve lost anyway (a worker
/// opened a socket in between) is taken back at the next close.
final class DescriptorReserve: Sendable {
    private let reserve: Locked<Int32>
    private let missing = Atomic<Bool>(false)
    /// When exhaustion was last logged, in monotonic milliseconds, for all loops together.
    private let lastWarning = Atomic<Int>(-1_000_000)

    init() {
        reserve = Locked(open("/dev/null", O_RDONLY | O_CLOEXEC))
    }

    /// `accept4` on `listener`, serialised with ``shed(listener:)``.
    func accept(_ listener: Int32, _ address: UnsafeMutablePointer<sockaddr>?, _ length: UnsafeMutablePointer<socklen_t>?, flags: Int32) -> Int32 {
        reserve.withLock { _ in accept4(listener, address, length, flags) }
    }

    /// Accepts one pending connection and closes it, using the spare
    /// descriptor. False when there was no spare to use: the caller should
    /// stop watching the listener for a while instead of spinning on it.
    func shed(listener: Int32) -> Bool {
        reserve.withLock { reserve in
            if reserve < 0 { reserve = open("/dev/null", O_RDONLY | O_CLOEXEC) }
            guard reserve >= 0 else {
                missing.store(true, ordering: .relaxed)
                return false
            }
            Glibc.close(reserve)
            let fd = accept4(listener, nil, nil, Int32(SOCK_CLOEXEC.rawValue))
            if fd >= 0 { Glibc.close(fd) }
            reserve = open("/dev/null", O_RDONLY | O_CLOEXEC)
            missing.store(reserve < 0, ordering: .relaxed)
            return true
        }
    }

    /// After a descriptor was closed: takes the spare back if it was lost.
    func replenish() {
        guard missing.load(ordering: .relaxed) else { return }
        reserve.withLock { reserve in
            if reserve < 0 { reserve = open("/dev/null", O_RDONLY | O_CLOEXEC) }
            missing.store(reserve < 0, ordering: .relaxed)
        }
    }

    /// Whether to log the exhaustion now: at most once per `interval` seconds
    /// for the whole server, whichever loop meets it.
    func shouldWarn(now: Double, interval: Double = 5) -> Bool {
        let millis = Int(now * 1000)
        var last = lastWarning.load(ordering: .relaxed)
        while Double(millis - last) >= interval * 1000 {
            let (exchanged, original) = lastWarning.compareExchange(expected: last, desired: millis, ordering: .relaxed)
            if exchanged { return true }
            last = original
        }
        return false
    }

    /// Gives the spare up, at shutdown.
    func close() {
        reserve.withLock { reserve in
            if reserve >= 0 { Glibc.close(reserve) }
            reserve = -1
        }
    }
}
