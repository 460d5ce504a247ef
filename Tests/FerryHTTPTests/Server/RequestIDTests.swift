@testable import FerryHTTP
import Testing

@Suite("Request ids")
struct RequestIDTests {
    @Test func generatedIdsAreTwentyHexDigitsSharingTheLoopsPrefixAndCounting() throws {
        var generator = RequestIDGenerator()
        let ids = (0..<300).map { _ in generator.next() }
        for id in ids {
            #expect(id.utf8.count == 20)
            #expect(id.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }, "\(id)")
            #expect(RequestIDGenerator.accepted(id) == id)
        }
        #expect(Set(ids.map { $0.prefix(8) }).count == 1)
        let counters = try ids.map { try #require(UInt64($0.dropFirst(8), radix: 16)) }
        // The counter goes up by one each time, wrapping at 48 bits as the 12 digits do.
        for (earlier, later) in zip(counters, counters.dropFirst()) {
            #expect(later == (earlier + 1) & 0xFFFF_FFFF_FFFF)
        }
    }
}
