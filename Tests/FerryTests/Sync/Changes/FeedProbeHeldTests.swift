@testable import Ferry
import Testing

/// ``FeedProbe/held(_:page:)``: a waiter whose check found changes that its
/// page, read in a later snapshot below a lower frontier, did not bring waits
/// for the frontier to pass them, as for changes held back. Parked without a
/// hold it slept until its deadline (ChangesWaitTests and FanOutTests timed
/// out on loaded machines: the frontier fell back between the two reads).
@Suite struct FeedProbeHeldTests {
    static let request = ChangesRequest(since: ChangeCursor(afterXID: 90), limit: 500, resources: ["terms"])

    @Test func foundButAnEmptyPageHoldsBelowThePagesFrontier() {
        let activity = FeedActivity(frontier: 120, found: true, held: false)
        let page = ChangesPage(emptyBelow: 100, request: Self.request)
        let (frontier, held) = FeedProbe.held(activity, page: page)
        #expect(held)
        #expect(frontier == 100)
    }

    @Test func aPageWithEntriesIsAnsweredNotHeld() {
        let activity = FeedActivity(frontier: 120, found: true, held: false)
        let page = ChangesPage(changes: "[{}]", hasMore: false, cursor: ChangeCursor(afterXID: 110), frontier: 120)
        #expect(!page.isEmpty)
        #expect(FeedProbe.held(activity, page: page) == (120, false))
    }

    @Test func nothingFoundKeepsTheChecksOwnAnswer() {
        let page = ChangesPage(emptyBelow: 120, request: Self.request)
        #expect(FeedProbe.held(FeedActivity(frontier: 120, found: false, held: true), page: page) == (120, true))
        #expect(FeedProbe.held(FeedActivity(frontier: 120, found: false, held: false), page: page) == (120, false))
    }
}
