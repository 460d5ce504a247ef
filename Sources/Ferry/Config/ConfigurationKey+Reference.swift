import Foundation

extension ConfigurationKey {
    /// docs/CONFIGURATION.md's reference: a Markdown table of every key,
    /// its environment variable, type, default and meaning. A test keeps the
    /// document's copy equal to this.
    public static func referenceMarkdown(_ config: FerryConfiguration = FerryConfiguration()) -> String {
        var out = "| key | environment | type | default | meaning |\n|---|---|---|---|---|\n"
        for key in all {
            let value: String
            switch key.read(config) {
            case .integer(let v): value = String(v)
            case .number(let v): value = v == v.rounded() ? String(Int(v)) : String(v)
            case .boolean(let v): value = v ? "true" : "false"
            case .string(let v): value = v.isEmpty ? "\"\"" : v
            case .stringList(let v): value = "[" + v.map { "\"\($0)\"" }.joined(separator: ", ") + "]"
            case .json(let v): value = v
            }
            let help = key.help.replacingOccurrences(of: "|", with: "\\|")
            out += "| `\(key.name)` | `\(key.environmentVariable)` | \(key.kind.rawValue) | `\(value)` | \(help) |\n"
        }
        return out
    }
}
