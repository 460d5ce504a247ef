@testable import Ferry
import Foundation
import Testing

@Suite("JSONRawMembers: a tombstone's fields as written")
struct JSONRawMembersTests {
    private func members(_ text: String) -> [String]? {
        JSONRawMembers.of(Array(text.utf8))?.map { "\($0.key)=\(String(decoding: $0.value, as: UTF8.self))" }
    }

    @Test func valuesOfEveryKindAreKeptByteForByte() {
        let row = #"{"id": "a,b}", "n": 1.50, "ok": true, "none": null, "tags": ["x", "]", {"k": [1, {"z": "}"}]}], "q": "say \"hi\" \\", "o": {}}"#
        #expect(members(row) == [
            #"id="a,b}""#, "n=1.50", "ok=true", "none=null", #"tags=["x", "]", {"k": [1, {"z": "}"}]}]"#,
            #"q="say \"hi\" \\""#, "o={}",
        ])
        #expect(members("{}") == [])
        #expect(members(" { \"a\" : 1 } ") == ["a=1"])
    }

    @Test func whatItIsNotSureOfIsNil() {
        for text in ["", "[1]", "{", #"{"a"}"#, #"{"a":}"#, #"{"a":1,}"#, #"{"a":1} x"#, #"{"a\"b":1}"#, #"{"a":"open}"#, #"{"a":[1}"#] {
            #expect(members(text) == nil, "\(text)")
        }
    }

    /// The same members, parsed, as Foundation reads the whole object.
    @Test func membersParseAsFoundationReadsTheObject() throws {
        let row = #"{"id": "f3a1", "revision": 7, "is_deleted": true, "deleted_at": 1732600000123, "word": "caf\u00e9 \ud83d\ude00", "rank": "0050V", "meta": {"a": [1, 2.5e3, null]}}"#
        let whole = try #require(JSONSerialization.jsonObject(with: Data(row.utf8)) as? NSDictionary)
        let lifted = try #require(JSONRawMembers.of(Array(row.utf8)))
        #expect(lifted.count == whole.count)
        for member in lifted {
            let value = try JSONSerialization.jsonObject(with: Data(member.value), options: [.fragmentsAllowed])
            #expect(NSDictionary(dictionary: [member.key: value]).isEqual(to: [member.key: whole[member.key]!]), "\(member.key)")
        }
    }
}
