import Foundation
import FerryTestSupport
import Testing

/// Creation time of a scratch database, copied from its template or migrated in place,
/// alternating, for bench/ci/README.md: `FERRY_SCRATCH_BENCH=40 swift test --skip-build
/// --filter ScratchTemplateBenchTests`. Prints figures; asserts no time.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["FERRY_SCRATCH_BENCH"] != nil), .serialized)
struct ScratchTemplateBenchTests {
    @Test func copyAndMigrateAlternating() throws {
        let samples = Int(ProcessInfo.processInfo.environment["FERRY_SCRATCH_BENCH"] ?? "") ?? 20
        // Builds the template first, so the copies measure copying only.
        try ScratchDatabase(prefix: "ferry_bench").drop()
        var copied: [Double] = []
        var migrated: [Double] = []
        let clock = ContinuousClock()
        for _ in 0..<samples {
            for template in [true, false] {
                let start = clock.now
                let database = try ScratchDatabase(prefix: "ferry_bench", template: template)
                let elapsed = clock.now - start
                database.drop()
                let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
                if template { copied.append(milliseconds) } else { migrated.append(milliseconds) }
            }
        }
        for (name, values) in [("copied from the template", copied), ("migrated in place", migrated)] {
            let sorted = values.sorted()
            let median = sorted[sorted.count / 2]
            let p90 = sorted[min(sorted.count - 1, sorted.count * 9 / 10)]
            let mean = values.reduce(0, +) / Double(values.count)
            print(
                "scratch database \(name): \(values.count) samples, median \(Int(median)) ms, mean \(Int(mean)) ms, "
                    + "p90 \(Int(p90)) ms, min \(Int(sorted[0])) ms, max \(Int(sorted[sorted.count - 1])) ms")
        }
    }
}
