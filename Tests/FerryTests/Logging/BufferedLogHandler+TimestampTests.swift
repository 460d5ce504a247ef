@testable import Ferry
import Glibc
import Testing

@Suite("BufferedLogHandler timestamps")
struct BufferedLogHandlerTimestampTests {
    /// What glibc's gmtime_r, which the handler no longer calls, writes for the same instant.
    private func expected(_ seconds: Int, _ milliseconds: Int) -> String {
        var time = seconds
        var parts = tm()
        gmtime_r(&time, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(milliseconds), 3))Z"
    }

    private func written(_ seconds: Int, _ milliseconds: Int) -> String {
        var line: [UInt8] = []
        BufferedLogHandler.withTimestamp(seconds: seconds, milliseconds: milliseconds) { line.append(contentsOf: $0) }
        return String(decoding: line, as: UTF8.self)
    }

    @Test func leapDaysCenturiesAndEpochEdgesMatchGlibc() {
        let instants = [
            0, 59, 86_399, 86_400, -1, -86_400, -86_401,
            951_782_400,  // 2000-02-29, a leap day in a century divisible by 400
            951_868_799,  // its last second
            4_107_542_400,  // 2100-03-01, the day after a February without 29 days
            1_709_164_800,  // 2024-02-29
            1_735_689_599,  // 2024-12-31T23:59:59
            253_402_300_799,  // 9999-12-31T23:59:59
        ]
        for seconds in instants {
            #expect(written(seconds, 7) == expected(seconds, 7), "at \(seconds)")
        }
    }

    @Test func everyDayOfFourHundredYearsMatchesGlibc() {
        // One instant a day, at a different second of each, over a whole Gregorian cycle.
        var seconds = 946_684_800  // 2000-01-01
        for day in 0..<146_097 {
            let instant = seconds + (day * 7_919) % 86_400
            let text = written(instant, day % 1_000)
            if text != expected(instant, day % 1_000) {
                Issue.record("at \(instant): \(text), glibc says \(expected(instant, day % 1_000))")
                return
            }
            seconds += 86_400
        }
    }
}
