import FerryHTTPTestSupport
import FerryTestSupport
import Foundation

/// The schemas of a served `/openapi.json`, looked up by where the document
/// uses them, with `$ref`s followed.
struct DescribedSchemas {
    let document: [String: Any]

    init(_ client: TestHTTPClient) throws {
        document = try client.request("GET", "/openapi.json").object
    }

    struct Missing: Error, CustomStringConvertible { let description: String }

    /// `value` as an object, following `$ref` (one level at a time, until none is left).
    func resolve(_ value: Any?) throws -> [String: Any] {
        guard var object = value as? [String: Any] else { throw Missing(description: "not an object: \(String(describing: value))") }
        while let ref = object["$ref"] as? String {
            var node: Any = document
            for part in ref.dropFirst(2).split(separator: "/") {
                guard let next = (node as? [String: Any])?[String(part)] else { throw Missing(description: "no \(ref)") }
                node = next
            }
            guard let resolved = node as? [String: Any] else { throw Missing(description: "\(ref) is not an object") }
            object = resolved
        }
        return object
    }

    func schema(_ name: String) throws -> [String: Any] {
        try resolve(["$ref": "#/components/schemas/\(name)"])
    }

    /// The schema of a shared parameter.
    func parameter(_ name: String) throws -> [String: Any] {
        try resolve(resolve(["$ref": "#/components/parameters/\(name)"])["schema"])
    }

    func operation(_ path: String, _ method: String) throws -> [String: Any] {
        let paths = document["paths"] as? [String: Any] ?? [:]
        return try resolve((paths[path] as? [String: Any])?[method])
    }

    /// The schema of the parameter called `name` of an operation (or of its path item).
    func parameter(_ name: String, path: String, method: String? = nil) throws -> [String: Any] {
        let paths = document["paths"] as? [String: Any] ?? [:]
        var parameters = (paths[path] as? [String: Any])?["parameters"] as? [Any] ?? []
        if let method { parameters += try operation(path, method)["parameters"] as? [Any] ?? [] }
        for parameter in parameters {
            let resolved = try resolve(parameter)
            if resolved["name"] as? String == name { return try resolve(resolved["schema"]) }
        }
        throw Missing(description: "no parameter \(name) on \(method ?? "") \(path)")
    }

    /// The JSON request body's schema of an operation.
    func requestBody(_ path: String, _ method: String) throws -> [String: Any] {
        let body = try resolve(operation(path, method)["requestBody"])
        let content = body["content"] as? [String: Any]
        return try resolve((content?["application/json"] as? [String: Any])?["schema"])
    }
}

/// The parts of JSON Schema the tests need, for a value as it travels as text
/// (a query parameter, a header) or as a JSON string.
enum Schema {
    static func accepts(_ schema: [String: Any], _ text: String) -> Bool {
        if let choices = schema["enum"] as? [String], !choices.contains(text) { return false }
        switch schema["type"] as? String {
        case "integer":
            guard text.range(of: "^-?[0-9]+$", options: .regularExpression) != nil, let value = Decimal(string: text) else { return false }
            if let minimum = schema["minimum"] as? Int, value < Decimal(minimum) { return false }
            if let maximum = schema["maximum"] as? Int, value > Decimal(maximum) { return false }
            return true
        case "boolean":
            return text == "true" || text == "false"
        default:
            let length = text.unicodeScalars.count
            if let minimum = schema["minLength"] as? Int, length < minimum { return false }
            if let maximum = schema["maxLength"] as? Int, length > maximum { return false }
            if let pattern = schema["pattern"] as? String {
                guard let regex = try? NSRegularExpression(pattern: pattern) else { return false }
                let range = NSRange(text.startIndex..., in: text)
                return regex.firstMatch(in: text, range: range) != nil
            }
            return true
        }
    }
}
