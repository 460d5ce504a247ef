import Foundation
import Testing

extension Resources {
    /// Random inserts, moves and deletes with the server-computed rank forms,
    /// checked against a model list after every step.
    @Suite struct RankModelTests {
        /// A small deterministic generator (64-bit LCG, high bits), so a failure replays.
        struct Generator {
            var state: UInt64
            mutating func next(_ bound: Int) -> Int {
                state = state &* 6364136223846793005 &+ 1442695040888963407
                return Int((state >> 33) % UInt64(bound))
            }
        }

        @Test(arguments: [UInt64(1), 2, 3])
        func randomEditsMatchTheModel(seed: UInt64) throws {
            let me = try ResourceFixture.user("rankmodel")
            let set = try me.createSet().id
            var random = Generator(state: seed)
            var model: [(id: String, word: String, revision: Int)] = []
            for step in 0..<60 {
                let kind = model.count < 3 ? 0 : random.next(10)
                let position = model.isEmpty ? 0 : random.next(model.count)
                // The form that puts a row at `position` of `rest` (the list without the row itself).
                func form(_ rest: [(id: String, word: String, revision: Int)], _ slot: Int) -> Any {
                    let coin = random.next(2) == 0
                    if rest.isEmpty { return "first" }
                    if slot == 0 { return coin ? "first" as Any : ["before": rest[0].id] as Any }
                    if slot >= rest.count { return coin ? "last" as Any : ["after": rest[rest.count - 1].id] as Any }
                    return coin ? ["after": rest[slot - 1].id] : ["before": rest[slot].id]
                }
                switch kind {
                case 0...5:  // insert at a random slot
                    let slot = model.isEmpty ? 0 : random.next(model.count + 1)
                    let word = "w\(step)"
                    let response = try me.call("POST", "/v1/terms", json: ["set_id": set, "word": word, "rank": form(model, slot)])
                    #expect(response.status == 201, "step \(step): \(response.text)")
                    model.insert((response.object.id, word, 1), at: slot)
                case 6...8:  // move a row
                    let row = model.remove(at: position)
                    let slot = random.next(model.count + 1)
                    let response = try me.call("PATCH", "/v1/terms/\(row.id)", json: ["rank": form(model, slot), "revision": row.revision])
                    #expect(response.status == 200, "step \(step): \(response.text)")
                    // A move that computes the key the row already has changes nothing (no new revision).
                    model.insert((row.id, row.word, response.object.revision), at: slot)
                default:  // delete a row
                    let row = model.remove(at: position)
                    let response = try me.call("DELETE", "/v1/terms/\(row.id)?revision=\(row.revision)")
                    #expect(response.status == 200, "step \(step): \(response.text)")
                }
                let server = try ComputedRankTests.words(me, set: set)
                try #require(server == model.map(\.word), "seed \(seed), step \(step)")
            }
        }
    }
}
