/// A JSON value as a configuration file holds it, keeping booleans and
/// numbers apart (JSONSerialization on Linux does not).
enum JSONConfigValue: Decodable, Equatable, Sendable {
    case null, bool(Bool), integer(Int), number(Double), string(String)
    case array([JSONConfigValue]), object([String: JSONConfigValue])

    init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let v = try? container.decode(Bool.self) {
            self = .bool(v)
        } else if let v = try? container.decode(Int.self) {
            self = .integer(v)
        } else if let v = try? container.decode(Double.self) {
            self = .number(v)
        } else if let v = try? container.decode(String.self) {
            self = .string(v)
        } else if let v = try? container.decode([JSONConfigValue].self) {
            self = .array(v)
        } else {
            self = .object(try container.decode([String: JSONConfigValue].self))
        }
    }

    /// The value as the key's kind, or nil when the JSON type is wrong.
    func configurationValue(for kind: ConfigurationKey.Kind) -> ConfigurationValue? {
        switch (kind, self) {
        case (.integer, .integer(let v)): return .integer(v)
        case (.number, .integer(let v)): return .number(Double(v))
        case (.number, .number(let v)): return .number(v)
        case (.boolean, .bool(let v)): return .boolean(v)
        case (.string, .string(let v)): return .string(v)
        case (.stringList, .array(let items)):
            var strings: [String] = []
            for item in items {
                guard case .string(let s) = item else { return nil }
                strings.append(s)
            }
            return .stringList(strings)
        case (.objectList, .array): return .json(String(decoding: jsonValue.bytes, as: UTF8.self))
        default: return nil
        }
    }
}
