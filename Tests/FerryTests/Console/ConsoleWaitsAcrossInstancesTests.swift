@testable import Ferry
import FerryHTTPTestSupport
import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

/// The console's "Waiting now" behind a balancer: a user's devices wait on
/// any instance, and the instance that answers the console lists them all,
/// each naming the instance that holds it (``WaitRoster``).
@Suite struct ConsoleWaitsAcrossInstancesTests {
    @Test func aUsersWaitsOnEveryInstanceAreListedWithTheInstanceHoldingEach() throws {
        let fixture = try ConsoleFixture { $0.live.maxWaitSeconds = 3_600 }
        defer { fixture.stop() }
        let other = try TestFerryInstance(database: fixture.server.database) { $0.live.maxWaitSeconds = 3_600 }
        defer { other.stop() }
        let kim = try fixture.server.user("kim")
        let cursor = try #require(try fixture.app("GET", "/v1/changes?since=now", token: kim.token).object["cursor"] as? String)
        // Both listeners connected: until then the other instance hears no ask, and is not counted.
        try waitUntil("both instances' listeners", within: 60) { fixture.server.app.live.isListening && other.app.live.isListening }

        // A long poll on the other instance only.
        let there = PendingRequest(port: other.port, "/v1/changes?since=\(cursor)&wait=3600", token: kim.token)
        try waitUntil("the other instance's waiter", within: 60) { other.app.live.waiters == 1 && other.app.live.checksRunning == 0 }
        #expect(fixture.server.app.live.waiters == 0)
        var page = try fixture.console("GET", "/users/\(kim.id)").object
        var waiting = page["waiting"] as? [[String: Any]] ?? []
        #expect(waiting.count == 1, "\(page)")
        let instance = waiting.first?["instance"] as? [String: Any]
        #expect(instance?["this_instance"] as? Bool == false, "\(page)")
        #expect(instance?["pid"] as? Int == Int(getpid()) && instance?["host"] as? String == ProcessInfo.processInfo.hostName)
        #expect(waiting.first?["route"] as? String == "changes" && waiting.first?["default_stream"] as? Bool == true)
        let instances = page["instances"] as? [String: Any]
        #expect(instances?["answered"] as? Int == 2 && instances?["unanswered"] as? Int == 0, "\(page)")

        // One more on the console's own instance: both listed, this one first.
        let here = PendingRequest(port: fixture.server.port, "/v1/changes?since=\(cursor)&wait=3600", token: kim.token)
        try waitUntil("this instance's waiter", within: 60) {
            fixture.server.app.live.waiters == 1 && fixture.server.app.live.checksRunning == 0
        }
        page = try fixture.console("GET", "/users/\(kim.id)").object
        waiting = page["waiting"] as? [[String: Any]] ?? []
        #expect(waiting.map { ($0["instance"] as? [String: Any])?["this_instance"] as? Bool } == [true, false], "\(page)")

        // Another user's page lists none of them, from either instance.
        let lee = try fixture.server.user("lee")
        #expect((try fixture.console("GET", "/users/\(lee.id)").object["waiting"] as? [Any])?.isEmpty == true)

        // A write answers both; they leave the list.
        _ = try fixture.app("POST", "/v1/study_sets", token: kim.token, json: ["title": "done"])
        #expect(try here.response().status == 200 && there.response().status == 200)
        let emptied = eventually(within: 60, every: 0.05) {
            ((try? fixture.console("GET", "/users/\(kim.id)").object["waiting"] as? [Any]) ?? [1]).isEmpty
        }
        #expect(emptied)
    }

    /// An answer is cut to PostgreSQL's notification payload, and says how
    /// many waits it left out; payloads that are neither ask nor answer are
    /// ignored.
    @Test func anAnswerFitsTheNotificationPayloadAndStrangePayloadsAreIgnored() throws {
        let wait = WaiterRegistry.Wait(
            followsDefault: false, streams: (0..<20).map { "set:\(UUID().uuidString.lowercased())-\($0)" }, resources: nil,
            several: true, since: Date())
        let answer = WaitRoster.fitted(
            WaitRoster.Answer(answer: "a", instance: "i", host: "h", pid: 1, waits: Array(repeating: wait, count: 200), more: 0))
        let payload = try JSONEncoder().encode(answer)
        #expect(payload.count <= WaitRoster.payloadLimit)
        #expect(!answer.waits.isEmpty && answer.waits.count + answer.more == 200)
        for strange in ["", "{}", "not json", #"{"ask":1}"#, #"{"answer":"a"}"#] {
            #expect(WaitRoster.message(strange) == nil, "\(strange)")
        }
        guard case .ask(let ask) = WaitRoster.message(#"{"ask":"x","user":"u","from":"f"}"#) else {
            Issue.record("an ask was not read")
            return
        }
        #expect(ask.user == "u")
    }
}
