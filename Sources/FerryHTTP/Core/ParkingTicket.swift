// Parking an exchange: the `ParkingTicket` a handler holds on to and whoever
// wakes it calls, and `ExchangeAddress`, where the exchange lives. The event
// loop's side (holding a parked exchange, resuming it, streaming its body on)
// is Server/EventLoop+Parking.swift; what a handler answers to park is
// Response/HTTPParking.swift. Here in Core because `RequestContext` carries
// the ticket; the loop it wakes is the server's, behind `ExchangeLoop`.

import FerryBase
import Synchronization

/// A handle on one exchange that its handler may park: the event loop then
/// holds the exchange as it holds an idle connection, with no thread and no
/// timer of its own, until someone calls ``wake()``, its deadline passes, or
/// the server shuts down. Then the server calls the responder again for the
/// same request, with ``RequestContext/resumption`` saying why.
///
/// The handler's part, on every call, in this order:
/// 1. ``arm()``;
/// 2. make the ticket findable by whatever will wake it (a registry of waiters);
/// 3. check the condition it waits for;
/// 4. answer at once when it holds, else answer ``HTTPResponse/parked(_:)``.
///
/// A ``wake()`` that comes after step 1 and before the loop has parked the
/// exchange is remembered, and the loop resumes the exchange at once instead
/// of holding it: a wake can never fall between the check and the park.
///
/// One ticket serves an exchange for its whole life, across every park.
public final class ParkingTicket: Sendable {
    /// Where the exchange lives.
    let address: ExchangeAddress
    private let state = Atomic<UInt8>(State.idle.rawValue)
    private let abandonment = Locked<(@Sendable () -> Void)?>(nil)

    enum State: UInt8 {
        /// Made, not yet armed.
        case idle
        /// The handler is checking its condition.
        case armed
        /// A wake came while the handler was checking.
        case wokenWhileArmed
        /// The loop holds the exchange.
        case parked
        /// The exchange is on its way back to the responder.
        case resuming
        /// The exchange ended without an answer; nothing will resume it.
        case ended
    }

    init(address: ExchangeAddress) {
        self.address = address
    }

    /// Step 1 above: from now on a ``wake()`` is not lost.
    public func arm() {
        var current = state.load(ordering: .acquiring)
        while current != State.ended.rawValue {
            let (exchanged, original) = state.compareExchange(
                expected: current, desired: State.armed.rawValue, ordering: .acquiringAndReleasing)
            if exchanged { return }
            current = original
        }
    }

    /// Resumes the exchange if it is parked, or makes it resume as soon as it
    /// parks if its handler is checking; otherwise (already resuming, or
    /// ended) nothing. Safe from any thread, and cheap: wakes that find
    /// nothing to do cost one atomic load.
    public func wake() {
        var current = state.load(ordering: .acquiring)
        while true {
            let next: State
            switch State(rawValue: current) {
            case .armed: next = .wokenWhileArmed
            case .parked: next = .resuming
            default: return
            }
            let (exchanged, original) = state.compareExchange(
                expected: current, desired: next.rawValue, ordering: .acquiringAndReleasing)
            if exchanged {
                if next == .resuming { address.handle.wake(fd: address.fd, serial: address.serial, self) }
                return
            }
            current = original
        }
    }

    /// Whether the exchange ended while parked, without an answer (the client
    /// went away, or the server stopped): a handler may check it to forget the ticket.
    public var isAbandoned: Bool { state.load(ordering: .acquiring) == State.ended.rawValue }

    /// Runs `body` once if the exchange ends while parked without being
    /// resumed (the client closed the connection, the server stopped): the
    /// place to forget the ticket. It runs on an I/O thread, so it must not
    /// block. Setting it again replaces it.
    public func whenAbandoned(_ body: @escaping @Sendable () -> Void) {
        abandonment.withLock { $0 = body }
    }

    // MARK: The loop's side

    /// The handler answered `.parked`: true when the loop should hold the
    /// exchange, false when a wake came meanwhile and it must resume now.
    func settle() -> Bool {
        var current = state.load(ordering: .acquiring)
        while true {
            switch State(rawValue: current) {
            case .wokenWhileArmed:
                let (exchanged, original) = state.compareExchange(
                    expected: current, desired: State.resuming.rawValue, ordering: .acquiringAndReleasing)
                if exchanged { return false }
                current = original
            case .ended:
                return true
            default:
                let (exchanged, original) = state.compareExchange(
                    expected: current, desired: State.parked.rawValue, ordering: .acquiringAndReleasing)
                if exchanged { return true }
                current = original
            }
        }
    }

    /// The loop resumes the exchange for a reason of its own (a deadline, shutdown).
    func claimResume() {
        state.store(State.resuming.rawValue, ordering: .releasing)
    }

    /// The exchange ended without an answer: runs the abandonment handler, if
    /// one is set, and forgets it (a handler that parked again after the
    /// connection closed under it sets a new one, which this runs too).
    func abandon() {
        state.store(State.ended.rawValue, ordering: .releasing)
        let body = abandonment.withLock { handler -> (@Sendable () -> Void)? in
            defer { handler = nil }
            return handler
        }
        body?()
    }
}

/// Where an exchange lives: its loop, and its connection (the descriptor and
/// the serial that tells it from a later connection on the same descriptor).
struct ExchangeAddress: Sendable {
    let handle: any ExchangeLoop
    let fd: Int32
    let serial: UInt64
}

/// The loop an exchange lives on, as its ticket needs it: where a wake goes.
/// The server's `LoopHandle` (Server/WorkerPool.swift) is the one kind. A
/// protocol because Core, which the ticket is part of, comes before the
/// server: the only per-request cost is the witness table stored with the
/// handle in ``ExchangeAddress``; the call through it happens once per wake.
protocol ExchangeLoop: AnyObject, Sendable {
    /// Resumes the exchange parked on connection `fd` (`serial` tells a later
    /// connection on the same descriptor apart) with `ticket`.
    func wake(fd: Int32, serial: UInt64, _ ticket: ParkingTicket)
}

/// Why the responder is called again for a parked exchange.
public struct Resumption: Sendable, Equatable {
    public enum Reason: Sendable, Equatable {
        /// ``ParkingTicket/wake()`` was called.
        case woken
        /// The deadline the handler gave has passed: answer with what there is.
        case deadline
        /// The server is shutting down: answer now, without waiting on anything.
        case shutdown
    }

    public var reason: Reason
    /// Whether the response head and part of a streamed body have gone out:
    /// only the body's continuation counts now (see ``HTTPParking/Stream``).
    public var streaming: Bool

    public init(reason: Reason, streaming: Bool) {
        self.reason = reason
        self.streaming = streaming
    }
}
