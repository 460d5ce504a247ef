import FerryHTTP
import Foundation
import Testing

@testable import Ferry

/// ``Revision`` as each form of the request gives it, as the bind sends it, and
/// as a failed write's `current` row carries it back.
@Suite struct RevisionTests {
    private func parsed(_ text: String) -> Int64? { Revision(parsing: text)?.value }
    private func matched(_ header: String) -> [Int64]? { EntityTag.matchRevisions(header)?.map(\.value) }

    /// `?revision=` and an `If-Match` tag: what `Int64` reads, not negative.
    @Test func parsesWhatInt64ReadsAndNothingNegative() {
        #expect(parsed("0") == 0)
        #expect(parsed("12") == 12)
        #expect(parsed("007") == 7)
        #expect(parsed("+3") == 3)
        #expect(parsed("-0") == 0)
        #expect(parsed("9223372036854775807") == Int64.max)
        for bad in [
            "-1", "-9223372036854775808", "9223372036854775808", "99999999999999999999", "", " 3", "3 ", "\t3", "3.0", "1e3", "0x10", "W/\"3\"",
            "\"3\"", "*", "3,4",
        ] {
            #expect(parsed(bad) == nil, "\(bad)")
        }
        #expect(Revision(value: -1) == nil)
    }

    /// `If-None-Match` names a revision only as Ferry writes it.
    @Test func canonicalIsExactlyAsWritten() {
        #expect(Revision(canonical: "3")?.value == 3)
        #expect(Revision(canonical: "0")?.value == 0)
        for bad in ["03", "+3", "-0", "-3", " 3", "3 ", "9223372036854775808"] {
            #expect(Revision(canonical: bad) == nil, "\(bad)")
        }
    }

    @Test func writesTheStrongTagAndTheDecimal() {
        let revision = Revision(value: 42)!
        #expect(revision.etag == #""42""#)
        #expect(EntityTag.revision(revision) == #""42""#)
        #expect(revision.description == "42")
        #expect(Revision(value: 3)! < revision)
    }

    /// `If-Match` compares strongly: weak tags and tags that are not revisions
    /// accept nothing; `*` anywhere is any row.
    @Test func ifMatchListsKeepOnlyStrongRevisions() {
        #expect(matched(#""1", W/"2", "03", "-4", "x", "9223372036854775808", "+5", " 6""#) == [1, 3, 5])
        #expect(matched(#"W/"1""#) == [])
        #expect(matched("\"1\" ,\t\"2\"") == [1, 2])
        #expect(matched(#""1", *"#) == nil)
        #expect(matched("*") == nil)
        #expect(matched("7") == [])
        let request = HTTPRequest(method: "PATCH", target: "/", path: "/", headers: HTTPHeaders([("If-Match", #""1", *"#)]))
        #expect(WritePreconditions(request) == WritePreconditions(revisions: nil, any: true))
        let weak = HTTPRequest(method: "PATCH", target: "/", path: "/", headers: HTTPHeaders([("If-Match", #"W/"1""#)]))
        #expect(WritePreconditions(weak) == WritePreconditions(revisions: [], any: false))
    }

    /// One `bigint[]` bind, NULL for none.
    @Test func bindsAsOneArray() {
        #expect(Bind.revisions([Revision(value: 1)!, Revision(value: 22)!]).text == #"{"1","22"}"#)
        #expect(Bind.revisions([]).text == "{}")
        #expect(Bind.revisions(nil).text == nil)
    }

    /// A failed write's `current` row: the revision as its column's type.
    @Test func decodesFromACurrentRow() throws {
        let decoder = JSONDecoder()
        #expect(try decoder.decode(WriteFailure.Current.self, from: Data(#"{"id":"a","revision":5}"#.utf8)).revision?.value == 5)
        #expect(try decoder.decode(WriteFailure.Current.self, from: Data(#"{"id":"a"}"#.utf8)).revision == nil)
        for bad in [#"{"revision":-1}"#, #"{"revision":5.5}"#, #"{"revision":"5"}"#, "null"] {
            #expect(throws: DecodingError.self, "\(bad)") { try decoder.decode(WriteFailure.Current.self, from: Data(bad.utf8)) }
        }
    }

    /// A single write's 410: the tombstone's revision is the ETag.
    @Test func goneTakesItsETagFromTheTombstone() {
        let current: [String: Any] = ["id": "a", "revision": 9, "is_deleted": true]
        let entry: [String: Any] = ["index": 0, "status": 410, "code": "gone", "current": current]
        let gone = WriteFailure.problem([entry], single: true)
        #expect(gone.status == 410)
        #expect(gone.headers["ETag"] == #""9""#)
        let noRow: [String: Any] = ["index": 0, "status": 410, "code": "gone", "current": NSNull()]
        #expect(WriteFailure.problem([noRow], single: true).headers["ETag"] == nil)
    }
}
