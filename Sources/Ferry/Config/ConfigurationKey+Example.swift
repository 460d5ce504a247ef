import Foundation

extension ConfigurationKey {
    /// `config.example.json`'s content: every key with its default, grouped
    /// by section in reference order. A test keeps the committed file equal to it.
    public static func exampleJSON(_ config: FerryConfiguration = FerryConfiguration()) -> String {
        var sections: [(String, [(String, ConfigurationValue)])] = []
        for key in all {
            let parts = key.name.split(separator: ".", maxSplits: 1).map(String.init)
            if sections.last?.0 != parts[0] { sections.append((parts[0], [])) }
            sections[sections.count - 1].1.append((parts[1], key.read(config)))
        }
        var out = "{\n"
        for (s, (section, members)) in sections.enumerated() {
            out += "  \(quote(section)): {\n"
            for (m, (name, value)) in members.enumerated() {
                out += "    \(quote(name)): \(render(value))" + (m == members.count - 1 ? "\n" : ",\n")
            }
            out += "  }" + (s == sections.count - 1 ? "\n" : ",\n")
        }
        return out + "}\n"
    }

    private static func render(_ value: ConfigurationValue) -> String {
        switch value {
        case .integer(let v): return String(v)
        case .number(let v): return v == v.rounded() && abs(v) < 1e15 ? String(Int(v)) : String(v)
        case .boolean(let v): return v ? "true" : "false"
        case .string(let v): return quote(v)
        case .stringList(let v): return "[" + v.map(quote).joined(separator: ", ") + "]"
        case .json(let v): return v
        }
    }

    private static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default:
                if scalar.value < 0x20 { out += String(format: "\\u%04x", scalar.value) } else { out.unicodeScalars.append(scalar) }
            }
        }
        return out + "\""
    }
}
