@testable import FerryHTTP
import Testing

/// Every transition of `ConnectionState`, with no socket: the events are the
/// loop's reports, the clock is a number the test moves.
@Suite("Connection state")
struct ConnectionStateTests {
    /// Short, distinct limits, so that each timeout is recognisable.
    static let limits: HTTPLimits = {
        var limits = HTTPLimits()
        (limits.headerTimeoutSeconds, limits.bodyTimeoutSeconds, limits.idleTimeoutSeconds, limits.writeTimeoutSeconds) = (1, 2, 3, 4)
        return limits
    }()

    /// A connection accepted at 100 s, with one request parsed and handed to a worker.
    static func handling(keepAlive: Bool = true) -> ConnectionState {
        var state = ConnectionState(limits: limits, now: 100)
        state.requestParsed(keepAlive: keepAlive, inline: false)
        return state
    }

    /// A connection whose last response (Connection: close) was queued at 100 s,
    /// lingering when `lingering`, else still writing it.
    static func closing(lingering: Bool) -> ConnectionState {
        var state = handling(keepAlive: false)
        if lingering {
            _ = answer(&state, at: 100)
        } else {
            _ = state.responseStarted(stopping: false, closeDelimited: false, streams: false)
            state.responseQueued(now: 100)
        }
        return state
    }

    /// Answers the request in hand at `now`: the response is started and queued at
    /// once, as an in-memory body is. Returns the keep-alive decision and the next step.
    static func answer(
        _ state: inout ConnectionState, at now: Double, stopping: Bool = false, closeDelimited: Bool = false
    ) -> (keepsAlive: Bool, step: ConnectionState.Step) {
        let keepsAlive = state.responseStarted(stopping: stopping, closeDelimited: closeDelimited, streams: false)
        state.responseQueued(now: now)
        return (keepsAlive, state.next(now: now, stopping: stopping))
    }

    /// The sweep's answer for a connection with no output pending.
    static func tick(
        _ state: ConnectionState, at now: Double, _ progress: ConnectionState.Progress = .none, stopping: Bool = false
    ) -> ConnectionState.TimerAction {
        state.timer(now: now, stopping: stopping, progress: progress, outputPending: false)
    }

    // MARK: Reading

    @Test func aNewConnectionParsesAndReadsWhatTheSocketHas() {
        var state = ConnectionState(limits: Self.limits, now: 100)
        #expect(state.phase == .reading)
        let step = state.next(now: 100, stopping: false)
        #expect(step == .parse)
        let input = state.needsInput(.none, now: 100)
        #expect(input == .read)
    }

    @Test func aShortReadEmptiesTheSocketUntilEpollReportsInputAgain() {
        var state = ConnectionState(limits: Self.limits, now: 100)
        state.read(10, filledBuffer: false, now: 101)
        #expect(state.lastReadAt == 101)
        let input = state.needsInput(.head, now: 101)
        #expect(input == .wait)
        state.polled(input: true, hangup: false)
        let input2 = state.needsInput(.head, now: 101)
        #expect(input2 == .read)
    }

    @Test func aFullReadMayHaveLeftInputBehind() {
        var state = ConnectionState(limits: Self.limits, now: 100)
        state.read(64 * 1024, filledBuffer: true, now: 101)
        let input = state.needsInput(.body, now: 101)
        #expect(input == .read)
    }

    @Test func readingWouldBlockWaitsForEpoll() {
        var state = ConnectionState(limits: Self.limits, now: 100)
        state.readWouldBlock()
        let input = state.needsInput(.none, now: 100)
        #expect(input == .wait)
    }

    @Test func afterAHangupIsReportedShortReadsGoOnUntilTheEnd() {
        var state = ConnectionState(limits: Self.limits, now: 100)
        state.polled(input: true, hangup: true)
        state.read(10, filledBuffer: false, now: 101)
        let input = state.needsInput(.head, now: 101)
        #expect(input == .read)
        state.read(0, filledBuffer: false, now: 101)
        #expect(state.peerClosed)
        #expect(!state.readable)
    }

    @Test func thePeersEndWithARequestUnfinishedCloses() {
        var state = ConnectionState(limits: Self.limits, now: 100)
        state.read(0, filledBuffer: false, now: 101)
        let input = state.needsInput(.head, now: 101)
        #expect(input == .close)
        var idle = ConnectionState(limits: Self.limits, now: 100)
        idle.read(0, filledBuffer: false, now: 101)
        let input2 = idle.needsInput(.none, now: 101)
        #expect(input2 == .close)
    }

    @Test func theHeaderClockStartsAtAHeadsFirstByteAndStopsWithTheRequest() {
        var state = ConnectionState(limits: Self.limits, now: 100)
        _ = state.needsInput(.head, now: 101)
        _ = state.needsInput(.head, now: 101.5)
        #expect(state.headStartedAt == 101)
        _ = state.needsInput(.body, now: 102)
        #expect(state.headStartedAt == 101)
        _ = state.needsInput(.none, now: 103)
        #expect(state.headStartedAt == nil)
        _ = state.needsInput(.head, now: 104)
        state.requestParsed(keepAlive: true, inline: false)
        #expect(state.headStartedAt == nil)
    }

    // MARK: Requests and responses

    @Test func aRequestGoesToAWorkerAndPipelinedOnesWait() {
        var state = Self.handling()
        #expect(state.phase == .handling)
        #expect(state.awaitsResponse)
        #expect(!state.awaitsSegments)
        let step = state.next(now: 100, stopping: false)
        #expect(step == .wait)
    }

    @Test func anInlineRequestStaysWithTheLoop() {
        var state = ConnectionState(limits: Self.limits, now: 100)
        state.requestParsed(keepAlive: true, inline: true)
        #expect(state.phase == .reading)
        #expect(!state.awaitsResponse)
    }

    @Test func aKeptAliveResponseReturnsToTheNextRequest() {
        var state = Self.handling()
        let (keepsAlive, step) = Self.answer(&state, at: 105)
        #expect(keepsAlive)
        #expect(state.idleSince == 105)
        #expect(!state.closeAfterWrite)
        #expect(step == .parse)
    }

    @Test func connectionCloseFromTheClientLingersAfterTheResponse() {
        var state = Self.handling(keepAlive: false)
        let (keepsAlive, step) = Self.answer(&state, at: 105)
        #expect(!keepsAlive)
        #expect(state.closeAfterWrite)
        #expect(step == .linger(shutDown: true))
        #expect(state.phase == .lingering)
        #expect(state.lingerDeadline == 107)
        let again = state.next(now: 105.5, stopping: false)
        #expect(again == .linger(shutDown: false))
    }

    @Test func shutdownAnswersWithConnectionCloseAndLingersBriefly() {
        var state = Self.handling()
        let (keepsAlive, step) = Self.answer(&state, at: 105, stopping: true)
        #expect(!keepsAlive)
        #expect(step == .linger(shutDown: true))
        #expect(state.lingerDeadline == 105.25)
    }

    @Test func aPeerThatHalfClosedGetsItsAnswerAndTheClose() {
        var state = Self.handling()
        state.read(0, filledBuffer: false, now: 101)
        let (keepsAlive, step) = Self.answer(&state, at: 102)
        #expect(!keepsAlive)
        #expect(step == .linger(shutDown: true))
    }

    @Test(arguments: [true, false])
    func aRefusalLingersWhenItClosesAndKeepsReadingWhenNot(closes: Bool) {
        var state = ConnectionState(limits: Self.limits, now: 100)
        state.refusing(close: closes)
        let (keepsAlive, step) = Self.answer(&state, at: 100)
        #expect(keepsAlive == !closes)
        #expect(step == (closes ? .linger(shutDown: true) : .parse))
    }

    @Test func aStreamedBodyWaitsForItsSegmentsThenReturnsToReading() {
        var state = Self.handling()
        let keepsAlive = state.responseStarted(stopping: false, closeDelimited: false, streams: true)
        #expect(keepsAlive)
        #expect(state.phase == .streaming)
        #expect(state.awaitsSegments)
        #expect(!state.awaitsResponse)
        let step = state.next(now: 101, stopping: false)
        #expect(step == .wait)
        state.responseQueued(now: 102)
        let step2 = state.next(now: 102, stopping: false)
        #expect(step2 == .parse)
    }

    @Test func aCloseDelimitedBodyEndsTheConnection() {
        var state = Self.handling()
        let (keepsAlive, step) = Self.answer(&state, at: 102, closeDelimited: true)
        #expect(!keepsAlive)
        #expect(step == .linger(shutDown: true))
    }

    @Test func lingeringGivesUpOnAPeerThatSendsTooMuch() {
        var state = Self.closing(lingering: true)
        let goesOn = state.drained(ConnectionState.maxLingerBytes)
        #expect(goesOn)
        let goesOn2 = state.drained(1)
        #expect(!goesOn2)
    }

    // MARK: Timers

    @Test func anIdleConnectionClosesAfterTheIdleTimeout() {
        let state = ConnectionState(limits: Self.limits, now: 100)
        #expect(Self.tick(state, at: 102.9) == .none)
        #expect(Self.tick(state, at: 103) == .close)
    }

    @Test func theIdleClockRestartsWithEachResponse() {
        var state = Self.handling()
        _ = Self.answer(&state, at: 110)
        #expect(Self.tick(state, at: 112) == .none)
        #expect(Self.tick(state, at: 113) == .close)
    }

    @Test func aSlowHeadTimesOut() {
        var state = ConnectionState(limits: Self.limits, now: 100)
        _ = state.needsInput(.head, now: 100.5)
        #expect(Self.tick(state, at: 101.4, .head) == .none)
        #expect(Self.tick(state, at: 101.5, .head) == .timeOut("The request head did not arrive in time."))
    }

    @Test func aStalledBodyTimesOutFromTheLastRead() {
        var state = ConnectionState(limits: Self.limits, now: 100)
        state.read(100, filledBuffer: false, now: 105)
        #expect(Self.tick(state, at: 106.9, .body) == .none)
        #expect(Self.tick(state, at: 107, .body) == .timeOut("The request body stalled."))
    }

    /// A body that never stalls but trickles is cut off by its pace: a grace of the body
    /// timeout, then a second more for each `minBodyBytesPerSecond` bytes; a body at a
    /// good pace is held only to the stall limit.
    @Test func aTricklingBodyTimesOutByItsPace() {
        var state = ConnectionState(limits: Self.limits, now: 100)
        _ = state.needsInput(.body, now: 100)
        for second in 1...3 { state.read(1, filledBuffer: false, now: 100 + Double(second)) }
        let due = state.deadline(stopping: false, progress: .body, outputPending: false) ?? 0
        #expect(abs(due - 102.003) < 1e-9, "\(due)")
        #expect(Self.tick(state, at: 102.002, .body) == .none)
        #expect(Self.tick(state, at: 102.0031, .body) == .timeOut("The request body came too slowly."))

        var fast = ConnectionState(limits: Self.limits, now: 100)
        _ = fast.needsInput(.body, now: 100)
        fast.read(10_000, filledBuffer: false, now: 101)
        #expect(Self.tick(fast, at: 102.9, .body) == .none)
        #expect(Self.tick(fast, at: 103, .body) == .timeOut("The request body stalled."))

        var unpaced = Self.limits
        unpaced.minBodyBytesPerSecond = 0
        var off = ConnectionState(limits: unpaced, now: 100)
        _ = off.needsInput(.body, now: 100)
        for second in 1...3 { off.read(1, filledBuffer: false, now: 100 + Double(second)) }
        #expect(Self.tick(off, at: 104.9, .body) == .none, "0: only stalls are cut off")

        // The next request's body gets its own grace.
        state.requestParsed(keepAlive: true, inline: true)
        _ = state.needsInput(.body, now: 200)
        state.read(1, filledBuffer: false, now: 201)
        #expect(Self.tick(state, at: 201.9, .body) == .none)
    }

    @Test func aStalledWriteClosesWhateverThePhase() {
        var state = Self.handling()
        state.writeBlocked(now: 100)
        state.writeBlocked(now: 102)
        #expect(state.writeStalledSince == 100)
        #expect(Self.tick(state, at: 103.9) == .none)
        #expect(Self.tick(state, at: 104) == .close)
        state.writeProgressed()
        #expect(Self.tick(state, at: 200) == .none)
    }

    @Test func noReadTimeoutWhileAWorkerHasTheRequestOrOutputIsPending() {
        let handling = Self.handling()
        #expect(Self.tick(handling, at: 1000) == .none)
        let reading = ConnectionState(limits: Self.limits, now: 100)
        #expect(reading.timer(now: 1000, stopping: false, progress: .none, outputPending: true) == .none)
    }

    @Test func aLingeringConnectionClosesAtItsDeadline() {
        let state = Self.closing(lingering: true)
        // The idle timeout no longer applies once the close is decided.
        #expect(Self.tick(state, at: 101.9) == .none)
        #expect(Self.tick(state, at: 102) == .close)
    }

    @Test func aConnectionClosingAfterItsWriteIsNotTimedOutAsIdle() {
        #expect(Self.tick(Self.closing(lingering: false), at: 1000) == .none)
    }

    // MARK: Shutdown

    @Test func shutdownClosesIdleConnectionsAndLetsBusyOnesFinish() {
        let idle = ConnectionState(limits: Self.limits, now: 100)
        #expect(idle.closesAtShutdown(progress: .none, outputPending: false))
        #expect(!idle.closesAtShutdown(progress: .head, outputPending: false))
        #expect(!idle.closesAtShutdown(progress: .body, outputPending: false))
        #expect(!idle.closesAtShutdown(progress: .none, outputPending: true))
        #expect(!Self.handling().closesAtShutdown(progress: .none, outputPending: false))
    }

    @Test func whileStoppingAnIdleConnectionClosesAtTheNextSweep() {
        let state = ConnectionState(limits: Self.limits, now: 100)
        #expect(Self.tick(state, at: 100.1, stopping: true) == .close)
        #expect(Self.tick(state, at: 100.1, .head, stopping: true) == .none)
    }

    // MARK: Parked exchanges

    @Test func aParkedExchangeWaitsWithNoTimeoutButItsWrites() {
        var state = Self.handling()
        state.parked()
        #expect(state.isParked)
        #expect(!state.awaitsResponse)
        #expect(state.next(now: 100, stopping: false) == .wait)
        // Long past every client timeout, the sweep leaves it alone.
        #expect(Self.tick(state, at: 1_000) == .none)
        #expect(Self.tick(state, at: 1_000, stopping: true) == .none)
        #expect(!state.closesAtShutdown(progress: .none, outputPending: false))
        // A stream's part that the client does not take is still cut off.
        state.writeBlocked(now: 1_000)
        #expect(state.timer(now: 1_004, stopping: false, progress: .none, outputPending: true) == .close)
    }

    @Test func aResumedExchangeAwaitsItsAnswerAgain() {
        var state = Self.handling()
        state.parked()
        state.resumed()
        #expect(state.awaitsResponse)
        #expect(state.next(now: 100, stopping: false) == .wait)
        #expect(Self.answer(&state, at: 101) == (true, .parse))
    }

    @Test func aPeerThatLeavesEndsAParkedExchange() {
        var state = Self.handling()
        state.parked()
        state.polled(input: true, hangup: true)
        #expect(state.next(now: 100, stopping: false) == .close)
    }

    @Test func aDeferredWakeResumesOnceTheOutputIsWritten() {
        var state = Self.handling()
        state.parked()
        state.deferWake()
        #expect(state.next(now: 100, stopping: false) == .resume)
        state.resumed()
        state.parked()
        #expect(state.next(now: 100, stopping: false) == .wait)
    }
}
