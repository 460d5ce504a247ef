@testable import Ferry
import FerryHTTP
import FerryMemcached
import FerryTestSupport
import Foundation
import Testing

/// The pieces of paging, without HTTP.
@Suite struct PagingUnitTests {
    let fingerprint = PagingFingerprint(userID: "u", resource: "terms", canonicalQuery: "q", limit: 100)

    @Test func tokensAreRandomURLSafeAndRoundTrip() throws {
        var seen = Set<String>()
        for _ in 0..<1000 {
            let token = PagingToken.issue(expiresAt: 1_800_000_000, fingerprint: fingerprint)
            #expect(token.text.utf8.count == PagingToken.textLength)
            #expect(token.text.utf8.allSatisfy(Base64URL.isAlphabet))
            #expect(PagingToken(parsing: token.text) == token)
            #expect(token.isBound(to: fingerprint))
            #expect(!token.isBound(to: PagingFingerprint(userID: "v", resource: "terms", canonicalQuery: "q", limit: 100)))
            seen.insert(token.text)
        }
        #expect(seen.count == 1000)
        let token = PagingToken.issue(expiresAt: 1_800_000_000, fingerprint: fingerprint)
        #expect(token.expiresAt == 1_800_000_000)
        #expect(token.storageKey.utf8.count < 250)
        for bad in [
            "", String(token.text.dropLast()), token.text + "A", "B" + token.text.dropFirst(),
            String(token.text.dropLast()) + "=", String(repeating: "/", count: 39),
        ] {
            #expect(PagingToken(parsing: bad) == nil, "\(bad)")
        }
    }

    @Test func base64URLDecodingIsStrict() {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            #expect(Base64URL.decode(Base64URL.encode(bytes)) == bytes)
        }
        #expect(Base64URL.decode("A") == nil)
        #expect(Base64URL.decode("AB") == nil, "non-zero unused bits: a second spelling of a byte")
        #expect(Base64URL.decode("AA") == [0])
        #expect(Base64URL.decode("A+") == nil)
    }

    @Test func uuidsPackIntoSixteenBytes() {
        let a = "0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9"
        let b = "ffffffff-0000-0000-0000-000000000001"
        var bytes: [UInt8] = []
        #expect(UUIDBytes.appendConcatenated(a + b, to: &bytes))
        #expect(bytes.count == 32)
        #expect(UUIDBytes.arrayLiteral(bytes[...]) == "{\(a),\(b)}")
        #expect(UUIDBytes.arrayLiteral(bytes[16...]) == "{\(b)}")
        var junk: [UInt8] = []
        #expect(!UUIDBytes.appendConcatenated(a + "x", to: &junk))
        junk = []
        #expect(!UUIDBytes.appendConcatenated(String(a.dropLast()), to: &junk))
    }

    @Test func headersRoundTripAndLocatePages() throws {
        let header = PagingSnapshotHeader(
            fingerprint: fingerprint, userID: "0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9", total: 300_000,
            idsPerChunk: 16_384, pageSize: 1000, expiresAt: 1_800_000_000)
        #expect(header.chunkCount == 19)
        #expect(header.pages == 300)
        let decoded = try #require(PagingSnapshotHeader(bytes: header.bytes))
        #expect(decoded == header)
        #expect(PagingSnapshotHeader(bytes: Array(header.bytes.dropLast())) == nil)
        #expect(header.positions(ofPage: 17) == 16_000..<17_000)
        #expect(header.positions(ofPage: 300) == 299_000..<300_000)
        #expect(PagingSnapshotLayout.chunks(covering: 16_000..<17_000, idsPerChunk: 16_384) == 0...1)
    }

    @Test func canonicalQueryIgnoresOrderAndPagingParameters() {
        let a = PagingFingerprint.canonicalQuery([("set_id", "x"), ("order", "word"), ("limit", "5"), ("page", "2")])
        let b = PagingFingerprint.canonicalQuery([("order", "word"), ("paging_token", "t"), ("set_id", "x")])
        #expect(a == b)
        #expect(a != PagingFingerprint.canonicalQuery([("set_id", "x")]))
        #expect(PagingFingerprint.canonicalQuery([("a", "b=c")]) != PagingFingerprint.canonicalQuery([("a=b", "c")]))
    }

    @Test func pagingParametersParse() throws {
        #expect(try PagingRequest(query: []).token == nil)
        #expect(try PagingRequest(query: [("paging_token", "t")]).page == 1)
        #expect(try PagingRequest(query: [("paging_token", "t"), ("page", "7")]).page == 7)
        for page in ["0", "-1", "x", "", "1e3", "100000001"] {
            #expect(throws: Problem.self) { try PagingRequest(query: [("paging_token", "t"), ("page", page)]) }
        }
        #expect(throws: Problem.self) { try PagingRequest(query: [("page", "2")]) }
    }

    @Test func nextLinksKeepTheQueryAsSent() {
        let request = HTTPRequest(
            method: "GET", target: "/v1/terms?set_id=a%2Cb&paging_token=old&page=3&limit=10", path: "/v1/terms",
            rawQuery: "set_id=a%2Cb&paging_token=old&page=3&limit=10")
        #expect(IndexPage.link(for: request, token: "new", page: 4) == "/v1/terms?set_id=a%2Cb&limit=10&paging_token=new&page=4")
    }

    @Test func snapshotStoreSplitsLargeResultsIntoChunks() throws {
        let memcached = try MemcachedClient(configuration: MemcachedConfiguration(serverList: TestEnvironment.memcached()))
        let store = PagingSnapshotStore(memcached: memcached, ttlSeconds: 60)
        var ids: [UInt8] = []
        for n in 0..<300_000 { withUnsafeBytes(of: UInt128(n).bigEndian) { ids += $0 } }
        let (token, header) = try store.store(ids: ids, fingerprint: fingerprint, userID: String(repeating: "0", count: 36), pageSize: 1000)
        #expect(header.chunkCount == 19)
        #expect(store.storedBytes(forCount: 300_000) == 4_800_092)
        for index in 0..<19 {
            let chunk = try #require(try memcached.get(PagingSnapshotLayout.chunkKey(token.storageKey, index)))
            #expect(chunk.count == min(16_384, 300_000 - index * 16_384) * 16)
        }
        guard case .found(let found, let slice) = store.read(token: token, page: 17, pageSize: 1000) else {
            Issue.record("page 17 not found")
            return
        }
        #expect(found == header)
        #expect(Array(slice) == Array(ids[(16_000 * 16)..<(17_000 * 16)]))
        guard case .found(_, let other) = store.read(token: token, page: 2, pageSize: 50_000) else {
            Issue.record("another page size reads what the header says")
            return
        }
        #expect(Array(other) == Array(ids[(1000 * 16)..<(2000 * 16)]))
        _ = try memcached.delete(PagingSnapshotLayout.chunkKey(token.storageKey, 1))
        guard case .incomplete = store.read(token: token, page: 17, pageSize: 1000) else {
            Issue.record("a lost chunk is never served as a short page")
            return
        }
        let expired = PagingSnapshotStore(memcached: memcached, ttlSeconds: 60, now: { 2_000_000_000 })
        guard case .expired = expired.read(token: token, page: 1, pageSize: 1000) else {
            Issue.record("past the token's expiry")
            return
        }
    }
}
