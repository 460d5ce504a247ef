@testable import Ferry
import FerryHTTP
import Testing

/// The Response stage's rules (docs/API.md), from a result value to the answer:
/// no socket, no database.
@Suite struct ResourceResponseTests {
    /// 2026-11-26T10:00:00Z, in milliseconds.
    static let modified: Int64 = 1_795_687_200_000
    static let modifiedDate = "Thu, 26 Nov 2026 10:00:00 GMT"
    static let row = #"{"id":"a","word":"hola","revision":7}"#

    static func answer(_ result: ResourceResult, _ conditions: ReadConditions = ReadConditions()) throws -> HTTPResponse {
        try ResourceResponse.make(result, conditions: conditions)
    }

    static func text(_ response: HTTPResponse) -> String {
        guard case .bytes(let bytes) = response.body else { return "<stream>" }
        return String(decoding: bytes, as: UTF8.self)
    }

    // MARK: - One row

    @Test func aOneItemWriteAnswersWithTheArraysOnlyElementByteForByte() {
        let row = #"{"id":"ä","word":"日本語 🎌","revision":7}"#
        #expect(ResourceResponse.singleRow("[" + row + "]") == Array(row.utf8))
        // Not an array: passed on as it is (a problem's body, say).
        #expect(ResourceResponse.singleRow(row) == Array(row.utf8))
        #expect(ResourceResponse.singleRow("[]").isEmpty)
        #expect(ResourceResponse.singleRow("[") == Array("[".utf8))
        #expect(ResourceResponse.singleRow("").isEmpty)
        // A string made from a slice of a longer one: the same bytes.
        let sliced = String(("xx[" + row + "]yy").dropFirst(2).dropLast(2))
        #expect(ResourceResponse.singleRow(sliced) == Array(row.utf8))
    }

    @Test func aRowAnswersWithItsBodyETagAndLastModified() throws {
        let response = try Self.answer(.row(json: Self.row, revision: Revision(value: 7)!, lastModified: Self.modified))
        #expect(response.status == 200)
        #expect(Self.text(response) == Self.row)
        #expect(response.headers["ETag"] == #""7""#)
        #expect(response.headers["Last-Modified"] == Self.modifiedDate)
        #expect(response.headers["Content-Type"] == "application/json")
    }

    @Test func ifNoneMatchNamingTheRevisionIs304WithValidatorsAndNoBody() throws {
        // The statement leaves the body out when If-None-Match names the revision.
        let response = try Self.answer(
            .row(json: nil, revision: Revision(value: 7)!, lastModified: Self.modified), ReadConditions(noneMatch: .tags(["6", "7"])))
        #expect(response.status == 304)
        #expect(Self.text(response).isEmpty)
        #expect(response.headers["ETag"] == #""7""#)
        #expect(response.headers["Last-Modified"] == Self.modifiedDate)
    }

    @Test func anotherRevisionOrStarDecideByTheTag() throws {
        let other = try Self.answer(
            .row(json: Self.row, revision: Revision(value: 7)!, lastModified: nil), ReadConditions(noneMatch: .tags(["6"])))
        #expect(other.status == 200)
        #expect(other.headers["Last-Modified"] == nil)
        let star = try Self.answer(.row(json: Self.row, revision: Revision(value: 7)!, lastModified: nil), ReadConditions(noneMatch: .any))
        #expect(star.status == 304)
    }

    @Test func ifModifiedSinceComparesWholeSeconds() throws {
        let seconds = Self.modified / 1000
        let same = try Self.answer(
            .row(json: Self.row, revision: Revision(value: 7)!, lastModified: Self.modified + 999), ReadConditions(modifiedSince: seconds))
        #expect(same.status == 304)
        let later = try Self.answer(
            .row(json: Self.row, revision: Revision(value: 7)!, lastModified: Self.modified + 1000), ReadConditions(modifiedSince: seconds))
        #expect(later.status == 200)
    }

    @Test func aRowWithoutItsBodyAndNoMatchIsAnInternalError() {
        #expect { try Self.answer(.row(json: nil, revision: Revision(value: 7)!, lastModified: nil)) } throws: { error in
            (error as? Problem)?.status == 500
        }
    }

    // MARK: - Tombstones

    @Test func aTombstoneIs410WithItsFieldsAndCurrentWhateverTheValidators() {
        let tombstone = #"{"id":"a","status":"x","revision":8,"is_deleted":true}"#
        for conditions in [ReadConditions(), ReadConditions(noneMatch: .tags(["8"])), ReadConditions(noneMatch: .any)] {
            #expect {
                try Self.answer(.tombstone(json: tombstone, revision: Revision(value: 8)!), conditions)
            } throws: { error in
                guard let problem = error as? Problem else { return false }
                let members = problem.extra.map(\.0)
                // `status` would collide with the problem's own member: it stays in `current` only.
                return problem.status == 410 && problem.code == .gone && problem.headers["ETag"] == #""8""#
                    && members == ["id", "is_deleted", "revision", "current"]
            }
        }
    }

    // MARK: - Collections

    @Test func multiShowIsTaggedByItsFingerprint() throws {
        let response = try Self.answer(.rows(json: "[\(Self.row)]", fingerprint: "abc"))
        #expect(response.headers["ETag"] == #""m-abc""#)
        #expect(Self.text(response) == "[\(Self.row)]")
        let current = try Self.answer(.rows(json: "[]", fingerprint: "abc"), ReadConditions(noneMatch: .tags(["m-abc"])))
        #expect(current.status == 304)
        #expect(current.headers["ETag"] == #""m-abc""#)
    }

    @Test func anUnpagedIndexIsWrappedInTheEnvelope() throws {
        let one = try Self.answer(.index(data: "[\(Self.row)]", total: 1, fingerprint: "f", limit: 100))
        #expect(one.headers["ETag"] == #""i-1-f""#)
        #expect(
            Self.text(one)
                == #"{"data":[\#(Self.row)],"paging":{"token":null,"page":1,"pages":1,"total":1,"next":null}}"#)
        let empty = try Self.answer(.index(data: "[]", total: 0, fingerprint: "0", limit: 100))
        #expect(Self.text(empty) == #"{"data":[],"paging":{"token":null,"page":1,"pages":1,"total":0,"next":null}}"#)
    }

    @Test func anIndexWithMoreRowsThanItsLimitSaysItIsIncomplete() throws {
        let response = try Self.answer(.index(data: "[]", total: 5, fingerprint: "f", limit: 2))
        #expect(
            Self.text(response)
                == #"{"data":[],"paging":{"token":null,"page":1,"pages":3,"total":5,"next":null,"complete":false}}"#)
        let current = try Self.answer(
            .index(data: "[]", total: 5, fingerprint: "f", limit: 2), ReadConditions(noneMatch: .tags(["i-5-f"])))
        #expect(current.status == 304)
    }

    @Test func aPagedIndexThatPagingFoundCurrentIs304() throws {
        let response = try Self.answer(.page(.notModified(etag: #""p-1""#)))
        #expect(response.status == 304)
        #expect(response.headers["ETag"] == #""p-1""#)
    }

    // MARK: - Writes

    static func written(status: Int = 200, body: String, id: String? = "a") -> WriteResult {
        WriteResult(status: status, body: body, revision: Revision(value: 7), lastModified: Self.modified, id: id)
    }

    @Test func aCreatedObjectAnswersWithTheRowItsStatusAndLocation() throws {
        let response = try Self.answer(
            .written(Self.written(status: 201, body: "[\(Self.row)]"), .created(resource: "terms", single: true)))
        #expect(response.status == 201)
        #expect(Self.text(response) == Self.row)
        #expect(response.headers["Location"] == "/v1/terms/a")
        #expect(response.headers["ETag"] == #""7""#)
        #expect(response.headers["Last-Modified"] == Self.modifiedDate)
    }

    @Test func aCreatedArrayAnswersWithTheArrayAndNoRowValidators() throws {
        let body = "[\(Self.row),\(Self.row)]"
        let response = try Self.answer(.written(Self.written(status: 201, body: body), .created(resource: "terms", single: false)))
        #expect(response.status == 201)
        #expect(Self.text(response) == body)
        #expect(response.headers["ETag"] == nil)
        #expect(response.headers["Location"] == nil)
    }

    @Test func aBulkWriteAnswers200WithTheArray() throws {
        let response = try Self.answer(.written(Self.written(body: "[]"), .bulk))
        #expect(response.status == 200)
        #expect(Self.text(response) == "[]")
    }

    @Test func aWriteByIdAnswersWithTheRowAndItsValidators() throws {
        let response = try Self.answer(.written(Self.written(body: "[\(Self.row)]"), .one))
        #expect(response.status == 200)
        #expect(Self.text(response) == Self.row)
        #expect(response.headers["ETag"] == #""7""#)
        #expect(response.headers["Last-Modified"] == Self.modifiedDate)
    }

    @Test func writesIgnoreReadValidators() throws {
        // A plan for a write carries no validators; even a stray one would not make a write a 304.
        let response = try Self.answer(.written(Self.written(body: "[\(Self.row)]"), .one), ReadConditions(noneMatch: .any))
        #expect(response.status == 200)
    }
}
