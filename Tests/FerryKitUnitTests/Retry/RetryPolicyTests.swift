import FerryKit
import Foundation
import Testing

/// Every row of the retry table (docs/FERRYKIT.md, "Retries"), with a fixed random draw.
@Suite struct RetryPolicyTests {
    let policy = RetryPolicy(base: 0.5, cap: 60)

    @Test(arguments: [
        (RetryPolicy.Outcome.status(200, retryAfter: nil), RetryPolicy.Step.success),
        (.status(201, retryAfter: nil), .success),
        (.status(409, retryAfter: nil), .merge),
        (.status(409, retryAfter: nil, code: "revision_conflict"), .merge),
        (.status(409, retryAfter: 1, code: "idempotency_key_in_use"), .retry(after: 1)),
        (.status(409, retryAfter: nil, code: "idempotency_key_in_use"), .retry(after: 0.25)),
        (.status(412, retryAfter: nil), .merge),
        (.status(410, retryAfter: nil), .tombstone),
        (.status(400, retryAfter: nil), .reject),
        (.status(403, retryAfter: nil), .reject),
        (.status(404, retryAfter: nil), .reject),
        (.status(413, retryAfter: nil), .reject),
        (.status(415, retryAfter: nil), .reject),
        (.status(422, retryAfter: nil), .reject),
        (.status(401, retryAfter: nil), .refreshToken),
        (.status(503, retryAfter: 7), .retry(after: 7)),
        (.status(429, retryAfter: 2.5), .retry(after: 2.5)),
    ])
    func theTable(outcome: RetryPolicy.Outcome, step: RetryPolicy.Step) {
        #expect(policy.step(after: outcome, attempt: 0, random: { 0.5 }) == step)
    }

    @Test func aSecond401InARowPauses() {
        #expect(policy.step(after: .status(401, retryAfter: nil), attempt: 0, previousWasUnauthorized: true) == .pause)
    }

    @Test func failuresWithoutRetryAfterBackOffWithFullJitterUpToTheCap() {
        for outcome in [
            RetryPolicy.Outcome.transportFailure, .status(500, retryAfter: nil), .status(503, retryAfter: nil), .status(429, retryAfter: nil),
        ] {
            #expect(policy.step(after: outcome, attempt: 3, random: { 0.5 }) == .retry(after: 0.5 * 8 * 0.5))
            #expect(policy.step(after: outcome, attempt: 3, random: { 0 }) == .retry(after: 0))
            #expect(policy.step(after: outcome, attempt: 40, random: { 0.999 }) == .retry(after: 60 * 0.999))
        }
    }

    @Test func retryAfterIsReadAsSecondsOrAsADate() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(RetryPolicy.retryAfter("12", now: now) == 12)
        #expect(RetryPolicy.retryAfter("Tue, 14 Nov 2023 22:13:40 GMT", now: now) == 20)
        #expect(RetryPolicy.retryAfter("soon", now: now) == nil)
        #expect(RetryPolicy.retryAfter(nil, now: now) == nil)
    }
}
