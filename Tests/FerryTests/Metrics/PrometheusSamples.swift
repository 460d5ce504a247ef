/// A parsed Prometheus text exposition: enough of the format to check what
/// Ferry writes (samples with labels, and the TYPE of each family).
struct PrometheusSamples {
    struct Sample {
        let name: String
        let labels: [String: String]
        let value: Double
    }

    var samples: [Sample] = []
    var types: [String: String] = [:]

    struct Malformed: Error, CustomStringConvertible {
        let description: String
    }

    init(_ text: String) throws {
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) where !line.isEmpty {
            if line.hasPrefix("# TYPE ") {
                let parts = line.split(separator: " ")
                guard parts.count == 4 else { throw Malformed(description: "bad TYPE line: \(line)") }
                types[String(parts[2])] = String(parts[3])
                continue
            }
            if line.hasPrefix("#") { continue }
            samples.append(try Self.sample(String(line)))
        }
    }

    static func sample(_ line: String) throws -> Sample {
        var labels: [String: String] = [:]
        let name: String
        var rest: Substring
        if let brace = line.firstIndex(of: "{") {
            name = String(line[..<brace])
            rest = line[line.index(after: brace)...]
            while rest.first != "}" {
                guard let eq = rest.firstIndex(of: "="), rest[rest.index(after: eq)] == "\"" else {
                    throw Malformed(description: "bad labels: \(line)")
                }
                let key = String(rest[..<eq])
                rest = rest[rest.index(eq, offsetBy: 2)...]
                var value = ""
                while let char = rest.first, char != "\"" {
                    rest.removeFirst()
                    if char == "\\", let escaped = rest.popFirst() {
                        value.append(escaped == "n" ? "\n" : escaped)
                    } else {
                        value.append(char)
                    }
                }
                guard rest.popFirst() == "\"" else { throw Malformed(description: "unterminated label: \(line)") }
                labels[key] = value
                if rest.first == "," { rest.removeFirst() }
            }
            rest.removeFirst()
        } else {
            guard let space = line.firstIndex(of: " ") else { throw Malformed(description: "no value: \(line)") }
            name = String(line[..<space])
            rest = line[space...]
        }
        let text = rest.trimmingPrefix(" ")
        let value: Double? = text == "+Inf" ? .infinity : Double(text)
        guard let value else { throw Malformed(description: "bad value: \(line)") }
        return Sample(name: name, labels: labels, value: value)
    }

    /// The value of the sample with exactly these labels (a subset match on the given ones).
    func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        samples.first { sample in
            sample.name == name && labels.allSatisfy { key, value in sample.labels[key] == value }
        }?.value
    }

    /// Every sample of a name.
    func all(_ name: String) -> [Sample] { samples.filter { $0.name == name } }
}
