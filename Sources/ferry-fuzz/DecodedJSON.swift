import Foundation

/// A JSON value as `JSONDecoder` reads it, which keeps `true` apart from `1` and a
/// string apart from a number: the oracle for what PostgreSQL's `jsonb_typeof` sees.
indirect enum DecodedJSON: Decodable {
    case null
    case boolean
    case string(String)
    /// A number that fits `Int64` as JSONDecoder reads it.
    case integer(Int64)
    /// Any other number.
    case number
    case array
    case object([String: DecodedJSON])

    init(from decoder: any Decoder) throws {
        let value = try decoder.singleValueContainer()
        if value.decodeNil() {
            self = .null
        } else if (try? value.decode(Bool.self)) != nil {
            self = .boolean
        } else if let integer = try? value.decode(Int64.self) {
            self = .integer(integer)
        } else if (try? value.decode(Double.self)) != nil {
            self = .number
        } else if let string = try? value.decode(String.self) {
            self = .string(string)
        } else if (try? value.decode([DecodedJSON].self)) != nil {
            self = .array
        } else {
            self = .object(try value.decode([String: DecodedJSON].self))
        }
    }

    /// The document, or nil when JSONDecoder does not read it.
    static func decode(_ bytes: [UInt8]) -> DecodedJSON? { try? JSONDecoder().decode(DecodedJSON.self, from: Data(bytes)) }
}
