@testable import Ferry
import Testing

/// A caller's walk decision stands for its lifetime, per bearer and schema
/// load, and the cache stays within its capacity.
@Suite struct WalkDecisionsTests {
    let start = ContinuousClock.now

    @Test func aDecisionStandsForItsLifetimePerBearerAndSchemaLoad() {
        let decisions = WalkDecisions(lifetime: .seconds(60))
        let key = WalkDecisions.Key(bearer: "a", generation: 1)
        #expect(decisions.walking(key, now: start) == nil)
        decisions.remember(["study_sets"], for: key, now: start)
        #expect(decisions.walking(key, now: start + .seconds(59)) == ["study_sets"])
        #expect(decisions.walking(WalkDecisions.Key(bearer: "a", generation: 2), now: start) == nil, "a new schema load decides again")
        #expect(decisions.walking(WalkDecisions.Key(bearer: "b", generation: 1), now: start) == nil)
        #expect(decisions.walking(key, now: start + .seconds(60)) == nil, "lapsed")
        decisions.remember([], for: key, now: start)
        #expect(decisions.walking(key, now: start) == [], "walking nothing is a decision too")
    }

    @Test func pastItsCapacityLapsedDecisionsGoThenAll() {
        let decisions = WalkDecisions(lifetime: .seconds(60), capacity: 2)
        let a = WalkDecisions.Key(bearer: "a", generation: 1), b = WalkDecisions.Key(bearer: "b", generation: 1)
        let c = WalkDecisions.Key(bearer: "c", generation: 1), d = WalkDecisions.Key(bearer: "d", generation: 1)
        decisions.remember(["x"], for: a, now: start)
        decisions.remember(["x"], for: b, now: start + .seconds(30))
        // a has lapsed by then: it goes, b stays.
        decisions.remember(["x"], for: c, now: start + .seconds(61))
        #expect(decisions.walking(b, now: start + .seconds(61)) == ["x"])
        #expect(decisions.walking(c, now: start + .seconds(61)) == ["x"])
        // None has lapsed: all go, and d is kept.
        decisions.remember(["x"], for: d, now: start + .seconds(62))
        #expect(decisions.walking(b, now: start + .seconds(62)) == nil)
        #expect(decisions.walking(d, now: start + .seconds(62)) == ["x"])
    }
}
