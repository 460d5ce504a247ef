@testable import Ferry
import Foundation
import Testing

@Suite("ObjectMembers: each value's bytes as written (a tombstone's fields)")
struct ObjectMembersValueBytesTests {
    private func members(_ text: String) -> [String]? {
        let bytes = Array(text.utf8)
        return ObjectMembers(bytes)?.members.map {
            "\(String(decoding: bytes[$0.key], as: UTF8.self))=\(String(decoding: bytes[$0.valueBytes], as: UTF8.self))"
        }
    }

    @Test func valuesOfEveryKindAreKeptByteForByte() {
        let row = #"{"id": "a,b}", "n": 1.50, "ok": true, "none": null, "tags": ["x", "]", {"k": [1, {"z": "}"}]}], "q": "say \"hi\" \\", "o": {}}"#
        #expect(
            members(row) == [
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
        let row =
            #"{"id": "f3a1", "revision": 7, "is_deleted": true, "deleted_at": 1732600000123, "word": "caf\u00e9 \ud83d\ude00", "rank": "0050V", "meta": {"a": [1, 2.5e3, null]}}"#
        let whole = try #require(JSONSerialization.jsonObject(with: Data(row.utf8)) as? NSDictionary)
        let bytes = Array(row.utf8)
        let lifted = try #require(ObjectMembers(bytes)).members
        #expect(lifted.count == whole.count)
        for member in lifted {
            let key = String(decoding: bytes[member.key], as: UTF8.self)
            let value = try JSONSerialization.jsonObject(with: Data(bytes[member.valueBytes]), options: [.fragmentsAllowed])
            #expect(NSDictionary(dictionary: [key: value]).isEqual(to: [key: whole[key]!]), "\(key)")
        }
    }
}
