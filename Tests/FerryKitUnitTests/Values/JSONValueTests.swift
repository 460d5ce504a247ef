import FerryKit
import Foundation
import Testing

@Suite struct JSONValueTests {
    @Test func decodingKeepsEveryJSONTypeApart() throws {
        let value = try JSONValue.decode(Data(#"{"a":true,"b":1,"c":1.5,"d":"x","e":null,"f":[1,false],"g":{"h":0},"i":-9007199254740993}"#.utf8))
        #expect(
            value
                == .object([
                    "a": .bool(true), "b": .int(1), "c": .double(1.5), "d": .string("x"), "e": .null,
                    "f": .array([.int(1), .bool(false)]), "g": .object(["h": .int(0)]), "i": .int(-9_007_199_254_740_993),
                ]))
        #expect(try JSONValue.decode(value.encoded()) == value, "round trip")
    }
}
