@testable import Ferry
import Foundation
import Testing

/// ``JSONTokenParser`` reads a token's JSON as `JSONDecoder` read it into
/// ``JSONConfigValue`` (which it replaced on the request path, issue 51):
/// the same value for what the decoder accepts, nil for what it refuses.
/// One difference, deliberate: the decoder reads a trailing comma (`[1,]`),
/// which RFC 8259 does not allow and other parsers refuse; the parser refuses it.
@Suite struct JSONTokenParserTests {
    static func decoded(_ text: String) -> JSONConfigValue? {
        try? JSONDecoder().decode(JSONConfigValue.self, from: Data(text.utf8))
    }

    static let accepted = [
        #"{}"#, #"[]"#, #" { "a" : 1 } "#, #"{"sub":"a","n":null,"t":true,"f":false}"#,
        #"{"i":0,"m":-0,"big":9223372036854775807,"over":9223372036854775808,"neg":-9223372036854775808}"#,
        #"{"f":1.5,"e":1e3,"E":2E-2,"whole":1.0,"exp":1700000000.0,"tiny":5e-324,"huge":1e308}"#,
        #"{"aud":["a","b",["c",{"d":[]}]],"nested":{"x":{"y":{}}}}"#,
        #"{"esc":"q\"b\\s\/b\bf\fn\nr\rt\t","u":"\u00e9\u4e2d\ud83d\ude00","raw":"é中😀"}"#,
        #"{"a\u0062":1,"":""}"#, "\t\n\r{\"a\":[1 , 2 ,3]}\n", #""text""#, #"12"#, #"true"#,
    ]

    static let refused = [
        "", " ", "{", "}", #"{"a":}"#, #"{"a" 1}"#, #"{a:1}"#, #"[1 2]"#,
        #"{"a":1}}"#, #"{,}"#, #"[,]"#, #"{"a":1} x"#, #"{'a':1}"#, #"{"a":01}"#, #"{"a":+1}"#, #"{"a":.5}"#, #"{"a":1.}"#,
        #"{"a":1e}"#, #"{"a":-}"#, #"{"a":1e400}"#, #"{"a":NaN}"#, #"{"a":tru}"#, #"{"a":nul}"#,
        #"{"a":"\x"}"#, #"{"a":"\u12"}"#, #"{"a":"\ud800"}"#, #"{"a":"\udc00"}"#, #"{"a":"\ud800\u0041"}"#,
        "{\"a\":\"tab\there\"}", "{\"a\":\"line\nbreak\"}", #"{"a":"unterminated}"#, #"{"a":1/*c*/}"#,
    ]

    @Test(arguments: accepted) func readsWhatTheDecoderReadsAlike(_ text: String) throws {
        let expected = try #require(Self.decoded(text), "JSONDecoder refuses \(text)")
        #expect(JSONTokenParser.value(Array(text.utf8)) == expected, "\(text)")
    }

    @Test(arguments: refused) func refusesWhatTheDecoderRefuses(_ text: String) {
        #expect(Self.decoded(text) == nil, "JSONDecoder reads \(text)")
        #expect(JSONTokenParser.value(Array(text.utf8)) == nil, "\(text)")
    }

    /// Trailing commas, which the decoder reads (see the suite's comment).
    static let trailingCommas = [#"{"a":1,}"#, #"[1,]"#, #"{"a":[1 , ] , }"#]

    @Test(arguments: trailingCommas) func refusesTrailingCommas(_ text: String) {
        #expect(Self.decoded(text) != nil, "JSONDecoder now refuses \(text): update the suite's comment")
        #expect(JSONTokenParser.value(Array(text.utf8)) == nil, "\(text)")
    }

    /// Whether `bytes` has a comma followed (past whitespace) by a closing bracket.
    static func hasTrailingComma(_ bytes: [UInt8]) -> Bool {
        let compact = bytes.filter { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
        return zip(compact, compact.dropFirst()).contains { $0 == UInt8(ascii: ",") && ($1 == UInt8(ascii: "}") || $1 == UInt8(ascii: "]")) }
    }

    @Test func refusesInvalidUTF8() {
        #expect(JSONTokenParser.value([UInt8](#"{"a":""#.utf8) + [0xC3, 0x28] + [UInt8](#""}"#.utf8)) == nil)
        #expect(JSONTokenParser.value([UInt8](#"{"a":""#.utf8) + [0xFF] + [UInt8](#""}"#.utf8)) == nil)
    }

    /// Random mutations of a token-like payload: where the decoder reads one,
    /// the parser reads the same (or refuses a trailing comma).
    @Test func agreesWithTheDecoderOnMutations() {
        let seed = Array(#"{"iss":"https://idp.test","sub":"a\u00e9","aud":["x",1.5],"exp":1700000000,"n":null,"t":true}"#.utf8)
        let alphabet = Array(#"{}[],:"\ u0123456789.eE+-tfnaxd"#.utf8)
        var generator = SystemRandomNumberGenerator()
        var agreed = 0
        for _ in 0..<3000 {
            var bytes = seed
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let at = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: bytes[at] = alphabet.randomElement(using: &generator)!
                case 1: bytes.remove(at: at)
                default: bytes.insert(alphabet.randomElement(using: &generator)!, at: at)
                }
            }
            let expected = try? JSONDecoder().decode(JSONConfigValue.self, from: Data(bytes))
            let got = JSONTokenParser.value(bytes)
            let agrees = got == expected || (got == nil && Self.hasTrailingComma(bytes))
            #expect(agrees, "\(String(decoding: bytes, as: UTF8.self))")
            if agrees { agreed += 1 }
        }
        #expect(agreed == 3000)
    }
}
